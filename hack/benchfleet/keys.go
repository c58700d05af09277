package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// keysWhileLoading starts the tool again with a fresh home and, from its first frame until its
// table is full, opens and closes the help every 50 ms, timing each key press (from send-keys'
// return) to the first captured screen that shows its effect: how responsive the workbench
// stays while it loads.
// Between the tool's presses, the same is timed for a reference program (echoRef, in a tmux
// server of its own) that answers a key with a write at once: the floor of the terminal path
// (tmux, the pseudo-terminal, one tmux process per capture) under the same load.
// Then, the table full, idleKeys more presses give the floor (the terminal path: tmux, the
// renderer's frame rate, the capture itself, whose resolution is one tmux process). Tools
// without a help marker (k9s) are not measured.
//
// full is that start's own full live table (from its launch; 0 until then): how long the load
// took with someone pressing keys through all of it (the workbench paces its load while keys come).
func (b *bench) keysWhileLoading(ctx context.Context, t *tool, pods, run int) (loading, idle, ref []time.Duration, full time.Duration, err error) {
	if t.helpShown == nil {
		return nil, nil, nil, 0, nil
	}
	releases := pods / b.spec.perRel
	refPane, err := b.startReference()
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer refPane.kill()
	rn, err := b.launch(t, pods, run, "keys")
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer rn.stop(t)
	p := rn.p
	if _, _, err := p.waitFor(ctx, t.firstFrame, 5*time.Millisecond, 30*time.Second); err != nil {
		return nil, nil, nil, 0, fmt.Errorf("no first frame: %w", err)
	}
	deadline := time.Now().Add(b.loadTimeout)
	refOpened := false
	for open := false; len(idle) < idleKeys; {
		if err := p.keys(t.helpKey); err != nil {
			return loading, idle, ref, full, err
		}
		k0 := time.Now() // the key is in the pane once send-keys returns; its own start-up is not the tool's
		open = !open
		at, s, err := p.poll(ctx, func(s string) bool { return t.helpShown(s) == open }, 10*time.Second)
		if err != nil {
			return loading, idle, ref, full, fmt.Errorf("key %d (help open=%v) never reached the screen: %w", len(loading)+len(idle)+1, open, err)
		}
		if full > 0 {
			idle = append(idle, at.Sub(k0))
		} else {
			loading = append(loading, at.Sub(k0))
			d, err := refPress(ctx, refPane, &refOpened)
			if err != nil {
				return loading, idle, ref, full, err
			}
			ref = append(ref, d)
		}
		if !open && full == 0 && t.full(s, releases, pods) {
			full = at.Sub(rn.start)
			time.Sleep(2 * time.Second) // past the load's tail
		}
		if full == 0 && at.After(deadline) {
			return loading, idle, ref, full, fmt.Errorf("no full table within %s", b.loadTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return loading, idle, ref, full, nil
}

// startReference runs echoRef (this binary) in a tmux server of its own, shown and ready.
func (b *bench) startReference() (*pane, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := newPane(fmt.Sprintf("benchfleet-%d-reference", os.Getpid()), b.width, b.height)
	if err != nil {
		return nil, err
	}
	if _, err := p.start([]string{exe, echoRefArg}, []string{"TERM=xterm-256color"}); err != nil {
		p.kill()
		return nil, err
	}
	if _, _, err := p.waitFor(context.Background(), func(s string) bool { return strings.Contains(s, refShut) }, 5*time.Millisecond, 10*time.Second); err != nil {
		p.kill()
		return nil, fmt.Errorf("the reference program never drew: %w", err)
	}
	return p, nil
}

// refPress times one key press of the reference program to its screen, as the tool's are.
func refPress(ctx context.Context, p *pane, opened *bool) (time.Duration, error) {
	if err := p.keys("x"); err != nil {
		return 0, err
	}
	k0 := time.Now()
	*opened = !*opened
	want := refShut
	if *opened {
		want = refOpen
	}
	at, _, err := p.poll(ctx, func(s string) bool { return strings.Contains(s, want) }, 10*time.Second)
	if err != nil {
		return 0, fmt.Errorf("reference key never reached the screen: %w", err)
	}
	return at.Sub(k0), nil
}

// idleKeys is how many presses measure the floor once the table is full.
const idleKeys = 20

// quantile is the smallest sample that at least q of the samples do not exceed (NaN when
// there are none): with 30 samples p99 is the largest.
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max(0, int(math.Ceil(q*float64(len(s))))-1)
	return float64(s[i].Microseconds()) / 1000
}

// saveKeys writes a start's key presses, one per line ("loading", "full" or "reference", then
// milliseconds), to keys-TOOL-PODS-N.tsv in the output directory: a p99 of 40-50 presses is their
// largest, so comparing two builds needs the presses of several starts pooled.
func (b *bench) saveKeys(tool string, pods int, r result) error {
	if len(r.keys)+len(r.idleKeys) == 0 {
		return nil
	}
	b.keySets++
	var out strings.Builder
	for _, set := range []struct {
		phase string
		ds    []time.Duration
	}{{"loading", r.keys}, {"full", r.idleKeys}, {"reference", r.refKeys}} {
		for _, d := range set.ds {
			fmt.Fprintf(&out, "%s\t%.3f\n", set.phase, float64(d.Microseconds())/1000)
		}
	}
	name := filepath.Join(b.out, fmt.Sprintf("keys-%s-%d-%03d.tsv", tool, pods, b.keySets))
	return os.WriteFile(name, []byte(out.String()), 0o644)
}

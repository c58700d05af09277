package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// keysWhileLoading starts the tool again with a fresh home and, from its first frame until its
// table is full, opens and closes the help every 50 ms, timing each key press (from send-keys'
// return) to the first captured screen that shows its effect: how responsive the workbench
// stays while it loads.
// Then, the table full, idleKeys more presses give the floor (the terminal path: tmux, the
// renderer's frame rate, the capture itself, whose resolution is one tmux process). Tools
// without a help marker (k9s) are not measured.
func (b *bench) keysWhileLoading(ctx context.Context, t *tool, pods, run int) (loading, idle []time.Duration, err error) {
	if t.helpShown == nil {
		return nil, nil, nil
	}
	releases := pods / b.spec.perRel
	rn, err := b.launch(t, pods, run, "keys")
	if err != nil {
		return nil, nil, err
	}
	defer rn.stop(t)
	p := rn.p
	if _, _, err := p.waitFor(ctx, t.firstFrame, 5*time.Millisecond, 30*time.Second); err != nil {
		return nil, nil, fmt.Errorf("no first frame: %w", err)
	}
	deadline := time.Now().Add(b.loadTimeout)
	for open, full := false, false; len(idle) < idleKeys; {
		if err := p.keys(t.helpKey); err != nil {
			return loading, idle, err
		}
		k0 := time.Now() // the key is in the pane once send-keys returns; its own start-up is not the tool's
		open = !open
		at, s, err := p.poll(ctx, func(s string) bool { return t.helpShown(s) == open }, 10*time.Second)
		if err != nil {
			return loading, idle, fmt.Errorf("key %d (help open=%v) never reached the screen: %w", len(loading)+len(idle)+1, open, err)
		}
		if full {
			idle = append(idle, at.Sub(k0))
		} else {
			loading = append(loading, at.Sub(k0))
		}
		if !open && !full {
			if full = t.full(s, releases, pods); full {
				time.Sleep(2 * time.Second) // past the load's tail
			}
		}
		if !full && at.After(deadline) {
			return loading, idle, fmt.Errorf("no full table within %s", b.loadTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return loading, idle, nil
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

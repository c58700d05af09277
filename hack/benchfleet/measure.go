package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// result is one run of one tool at one fleet size.
type result struct {
	tool      string
	pods      int
	fullTable time.Duration   // start → complete live table
	filter    time.Duration   // typing the filter → the filtered table on screen
	rssFull   uint64          // when the table first became complete
	rssIdle   uint64          // after the idle period
	rssPeak   uint64          // highest sample during the idle period
	idleCPU   float64         // % of one core over the CPU window at the end of the idle period
	err       error           // the run failed: no figure counts
	filterErr error           // only the filter never reached the screen
	keys      []time.Duration // key press → frame, while loading (a second start)
	idleKeys  []time.Duration // the same once that start's table is full: the floor
	refKeys   []time.Duration // the reference program's key → frame, pressed between the tool's while it loads
	keysFull  time.Duration   // the keys start's full live table: the load with keys pressed all through
	keysErr   error           // the keys phase failed (its figures do not count)
	// A start on the home the measured run left (its cache): launch → first frame, and →
	// the first frame that shows every release (from the cache or live).
	restartFrame, restartRows time.Duration
	restartErr                error
}

// measure runs one tool once: start it in a fresh tmux pane with a fresh home, wait for the full
// table, sit idle, then filter.
func (b *bench) measure(ctx context.Context, t *tool, pods int, run int) (r result) {
	r = result{tool: t.name, pods: pods}
	releases := pods / b.spec.perRel
	rn, err := b.launch(t, pods, run, "")
	if err != nil {
		r.err = err
		return r
	}
	defer rn.stop(t)
	p, pid, dir, start := rn.p, rn.pid, rn.dir, rn.start
	loadProf := b.profileWhenUp(ctx, t, dir, "cpu-load", fmt.Sprintf("profile?seconds=%d", int(b.loadProfile.Seconds())))
	defer func() { <-loadProf }()
	at, _, err := p.waitFor(ctx, func(s string) bool { return t.full(s, releases, pods) }, 25*time.Millisecond, b.loadTimeout)
	if err != nil {
		r.err = fmt.Errorf("%s never showed the full table: %w", t.name, err)
		return r
	}
	r.fullTable = at.Sub(start)
	r.rssFull, _ = rss(pid)
	b.logf("  %s: full table after %s, RSS %s", t.name, r.fullTable.Round(time.Millisecond), mib(r.rssFull))
	b.profile(t, dir, "heap-full", "heap")

	window := min(b.cpuWindow, b.idle)
	if err := b.sleepSampling(ctx, pid, b.idle-window, &r.rssPeak); err != nil {
		r.err = err
		return r
	}
	c0, err0 := cpuTime(pid)
	w0 := time.Now()
	profDone := b.profileAsync(t, dir, "cpu-idle", fmt.Sprintf("profile?seconds=%d", int(window.Seconds())))
	if err := b.sleepSampling(ctx, pid, window, &r.rssPeak); err != nil {
		r.err = err
		return r
	}
	c1, err1 := cpuTime(pid)
	if err0 != nil || err1 != nil {
		r.err = fmt.Errorf("%s: read CPU time: %v %v", t.name, err0, err1)
		return r
	}
	<-profDone
	r.idleCPU = 100 * float64(c1-c0) / float64(time.Since(w0))
	r.rssIdle, _ = rss(pid)
	r.rssPeak = max(r.rssPeak, r.rssIdle)
	b.logf("  %s: after %s idle RSS %s (peak %s), idle CPU %.2f %% of a core", t.name, b.idle, mib(r.rssIdle), mib(r.rssPeak), r.idleCPU)
	b.profile(t, dir, "heap-idle", "heap")

	if err := p.keys(t.filterKeys...); err != nil {
		r.err = err
		return r
	}
	time.Sleep(300 * time.Millisecond) // the prompt opens; the clock starts with the typing
	f0 := time.Now()
	if err := p.literal(t.filterText(releases)); err != nil {
		r.err = err
		return r
	}
	if err := p.keys("Enter"); err != nil {
		r.err = err
		return r
	}
	at, _, err = p.waitFor(ctx, func(s string) bool { return t.filtered(s, b.spec.perRel) }, 5*time.Millisecond, 60*time.Second)
	if err != nil { // the other figures stand; the report shows the filter as not reached
		r.filterErr = fmt.Errorf("%s never showed the filtered table: %w", t.name, err)
		b.logf("  %s: %v", t.name, firstLines(r.filterErr.Error(), 1))
		return r
	}
	r.filter = at.Sub(f0)
	b.logf("  %s: filtered in %s", t.name, r.filter.Round(time.Millisecond))
	if t.cached != nil {
		r.restartFrame, r.restartRows, r.restartErr = b.restart(ctx, t, rn, releases)
		if r.restartErr != nil {
			b.logf("  %s restart: %v", t.name, firstLines(r.restartErr.Error(), 1))
		} else {
			b.logf("  %s restart: first frame %s, every release shown %s", t.name, r.restartFrame.Round(time.Millisecond), r.restartRows.Round(time.Millisecond))
		}
	}
	return r
}

// running is one start of a tool: its fresh home, its pane and its PID.
type running struct {
	dir   string
	p     *pane
	pid   int
	start time.Time // just before the pane started the tool
	// stopped: stop has run.
	stopped bool
	// traceEnds: the start writes an execution trace until about then; the hook stops it on a
	// timer, so a start killed earlier leaves an empty file.
	traceEnds time.Time
}

// launch starts t in a fresh tmux pane with a fresh home; what ("" or e.g. "keys") tells the
// starts of one run apart in the home's and the tmux server's names.
func (b *bench) launch(t *tool, pods, run int, what string) (*running, error) {
	tag := ""
	if what != "" {
		tag = "-" + what
	}
	dir, err := os.MkdirTemp(b.work, fmt.Sprintf("%s-%d-%d%s-", t.name, pods, run, tag))
	if err != nil {
		return nil, err
	}
	return b.launchIn(t, dir, tag)
}

// launchIn starts t in a fresh tmux pane with its home in dir.
func (b *bench) launchIn(t *tool, dir, tag string) (*running, error) {
	argv, env, err := t.setup(t, dir, tag, b)
	if err != nil {
		return nil, err
	}
	p, err := newPane(fmt.Sprintf("benchfleet-%d-%s%s", os.Getpid(), t.name, tag), b.width, b.height)
	if err != nil {
		return nil, err
	}
	rn := &running{dir: dir, p: p, start: time.Now()}
	if b.trace && slices.ContainsFunc(env, func(v string) bool { return strings.HasPrefix(v, traceEnv+"=") }) {
		rn.traceEnds = rn.start.Add(b.traceFor + time.Second)
	}
	if rn.pid, err = p.start(argv, env); err != nil {
		rn.stop(t)
		return nil, err
	}
	return rn, nil
}

// restart quits the measured start as a user does and starts the tool again on the same home,
// timing its first frame and the first frame that shows every release (the cache's rows, for
// rangekeeper: an operator's restart). The closed start's pane is gone when it returns.
func (b *bench) restart(ctx context.Context, t *tool, rn *running, releases int) (frame, rows time.Duration, err error) {
	rn.awaitTrace()
	if err := rn.p.keys(t.quitKeys...); err != nil {
		return 0, 0, err
	}
	for deadline := time.Now().Add(30 * time.Second); !rn.p.dead(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%s did not quit within 30 s", t.name)
		}
	}
	rn.stop(t)
	again, err := b.launchIn(t, rn.dir, "-restart")
	if err != nil {
		return 0, 0, err
	}
	defer again.stop(t)
	at, _, err := again.p.poll(ctx, t.firstFrame, 30*time.Second)
	if err != nil {
		return 0, 0, fmt.Errorf("no first frame: %w", err)
	}
	frame = at.Sub(again.start)
	at, _, err = again.p.poll(ctx, func(s string) bool { return t.cached(s, releases) }, 30*time.Second)
	if err != nil {
		return frame, 0, fmt.Errorf("never showed every release: %w", err)
	}
	return frame, at.Sub(again.start), nil
}

// stop ends the tmux server and, should it outlive its pane, the tool; later calls do nothing
// (a restart stops the start it replaces before that start's own deferred stop).
func (rn *running) stop(t *tool) {
	if rn.stopped {
		return
	}
	rn.stopped = true
	rn.awaitTrace()
	rn.p.kill()
	if rn.pid > 0 {
		stopPID(rn.pid, t.bin, 3*time.Second)
	}
}

// awaitTrace waits until the start's execution trace is written out (if it writes one).
func (rn *running) awaitTrace() {
	if wait := time.Until(rn.traceEnds); wait > 0 {
		time.Sleep(wait)
	}
}

// sleepSampling waits d, sampling the RSS every 5 s into peak.
func (b *bench) sleepSampling(ctx context.Context, pid int, d time.Duration, peak *uint64) error {
	for end := time.Now().Add(d); time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(5*time.Second, time.Until(end))):
		}
		if v, err := rss(pid); err == nil {
			*peak = max(*peak, v)
		}
	}
	return nil
}

// profileWhenUp saves a CPU profile of the loading tool: it polls until the tool's pprof
// server answers (it starts with the process), then profiles for the load-profile window.
func (b *bench) profileWhenUp(ctx context.Context, t *tool, dir, name, path string) <-chan struct{} {
	if b.pprofAddr == "" || t.name == "k9s" {
		done := make(chan struct{})
		close(done)
		return done
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(2 * time.Millisecond) {
		if c, err := net.Dial("tcp", b.pprofAddr); err == nil {
			c.Close()
			break
		}
	}
	return b.profileAsync(t, dir, name, path)
}

// profile saves one pprof profile of rangekeeper (only with -pprof; k9s has no such hook).
func (b *bench) profile(t *tool, dir, name, path string) { <-b.profileAsync(t, dir, name, path) }

func (b *bench) profileAsync(t *tool, dir, name, path string) <-chan struct{} {
	done := make(chan struct{})
	if b.pprofAddr == "" || t.name == "k9s" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		out := filepath.Join(b.out, fmt.Sprintf("%s-%s-%s.pb.gz", filepath.Base(dir), t.name, name))
		resp, err := http.Get("http://" + b.pprofAddr + "/debug/pprof/" + path)
		if err != nil {
			b.logf("  pprof %s: %v", name, err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(out)
		if err != nil {
			b.logf("  pprof %s: %v", name, err)
			return
		}
		defer f.Close()
		if _, err := io.Copy(f, resp.Body); err != nil {
			b.logf("  pprof %s: %v", name, err)
			return
		}
		b.logf("  pprof %s → %s", name, out)
	}()
	return done
}

func mib(n uint64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

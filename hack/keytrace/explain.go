package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// press is one terminal read and the next frame write.
type press struct{ read, frame trace.Time }

// interval is a goroutine in one state (or a global range) from..to; where says where it
// blocked or what it ran (a short stack), when the trace tells.
type interval struct {
	from, to trace.Time
	state    string
	where    string
}

// timelines are what explain reads for each slow press: the states of the goroutines a key
// passes through (the input reader's, the event loop's, the renderer's), their GC assists, the
// stop-the-world pauses and CPU samples of the event loop.
type timelines struct {
	byRole      map[string][]interval
	assist, stw []interval
	samples     []interval // from == to: one sample
}

// roles are the goroutines a key passes through, in order, known by a function on their stacks.
var roles = []struct{ name, fn string }{
	{"input", "(*TerminalReader)."},
	{"event loop", "(*Program).eventLoop"},
	{"renderer", "(*Program).startRenderer"},
	{"renderer", "flushFrame"},
}

// explain prints, for each press slower than over, where the event loop and the renderer spent
// the time between the read and the frame.
func explain(path string, presses []press, t0 trace.Time, over time.Duration, verbose bool) error {
	var slow []press
	for _, p := range presses {
		if time.Duration(p.frame-p.read) > over {
			slow = append(slow, p)
		}
	}
	if len(slow) == 0 {
		fmt.Printf("no press over %v\n", over)
		return nil
	}
	tl, err := collect(path)
	if err != nil {
		return err
	}
	for _, p := range slow {
		fmt.Printf("%7.3fs %v\n", time.Duration(p.read-t0).Seconds(), time.Duration(p.frame-p.read))
		for _, r := range []string{"input", "event loop", "renderer"} {
			fmt.Printf("  %-10s %s\n", r+":", summarize(tl.byRole[r], p))
			if verbose {
				for _, iv := range tl.byRole[r] {
					if clip(iv, p) > 0 {
						fmt.Printf("    %+9.3fms %8.3fms %-9s %s\n", float64(iv.from-p.read)/1e6, float64(iv.to-iv.from)/1e6, iv.state, iv.where)
					}
				}
			}
		}
		fmt.Printf("  GC assists on them %v, stop-the-world %v\n", overlap(tl.assist, p), overlap(tl.stw, p))
		counts := map[string]int{}
		for _, s := range tl.samples {
			if s.from >= p.read && s.from <= p.frame {
				counts[s.where]++
			}
		}
		for _, w := range sortedKeys(counts) {
			fmt.Printf("  sample ×%d %s\n", counts[w], w)
		}
	}
	return nil
}

// summarize adds up a goroutine's time per state within the press, with the stacks it waited on.
func summarize(tl []interval, p press) string {
	per := map[string]time.Duration{}
	for _, iv := range tl {
		d := clip(iv, p)
		if d <= 0 {
			continue
		}
		k := iv.state
		if iv.where != "" && iv.state != "running" {
			k += " @ " + iv.where
		}
		per[k] += d
	}
	var parts []string
	for _, k := range sortedKeys(per) {
		parts = append(parts, fmt.Sprintf("%s %v", k, per[k].Round(10*time.Microsecond)))
	}
	if len(parts) == 0 {
		return "(not seen)"
	}
	return strings.Join(parts, "; ")
}

func overlap(ivs []interval, p press) time.Duration {
	var d time.Duration
	for _, iv := range ivs {
		d += max(0, clip(iv, p))
	}
	return d.Round(10 * time.Microsecond)
}

func clip(iv interval, p press) time.Duration {
	return time.Duration(min(iv.to, p.frame) - max(iv.from, p.read))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// collect reads the trace's state intervals of Bubble Tea's event loop and renderer goroutines
// (known by the stacks they are seen with), GC assists and stop-the-world pauses.
func collect(path string) (*timelines, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return nil, err
	}
	tl := &timelines{byRole: map[string][]interval{}}
	role := map[trace.GoID]string{} // once a stack showed it
	open := map[trace.GoID]interval{}
	assists := map[trace.GoID]trace.Time{}
	var stwFrom trace.Time
	var last trace.Time
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		last = e.Time()
		switch e.Kind() {
		case trace.EventStackSample:
			if role[e.Goroutine()] == "event loop" {
				tl.samples = append(tl.samples, interval{from: e.Time(), to: e.Time(), where: short(e.Stack(), 4)})
			}
		case trace.EventRangeBegin, trace.EventRangeEnd:
			name := e.Range().Name
			begin := e.Kind() == trace.EventRangeBegin
			switch {
			case strings.HasPrefix(name, "stop-the-world"):
				if begin {
					stwFrom = e.Time()
				} else if stwFrom != 0 {
					tl.stw = append(tl.stw, interval{from: stwFrom, to: e.Time(), state: name})
				}
			case name == "GC mark assist":
				g := e.Goroutine()
				if begin {
					assists[g] = e.Time()
				} else if from, ok := assists[g]; ok && role[g] != "" {
					tl.assist = append(tl.assist, interval{from: from, to: e.Time(), state: role[g]})
				}
			}
		case trace.EventStateTransition:
			s := e.StateTransition()
			if s.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := s.Resource.Goroutine()
			st := full(s.Stack)
			for _, r := range roles {
				if strings.Contains(st, r.fn) {
					role[g] = r.name
					break
				}
			}
			if role[g] == "" {
				continue
			}
			if iv, ok := open[g]; ok {
				iv.to = e.Time()
				tl.byRole[role[g]] = append(tl.byRole[role[g]], iv)
			}
			_, to := s.Goroutine()
			iv := interval{from: e.Time(), state: to.String()}
			if to == trace.GoRunning {
				iv.state = "running"
			} else {
				iv.where = short(s.Stack, 3)
			}
			open[g] = iv
		}
	}
	for g, iv := range open {
		iv.to = last
		tl.byRole[role[g]] = append(tl.byRole[role[g]], iv)
	}
	return tl, nil
}

// full is a stack's functions, innermost first, each followed by ';'.
func full(s trace.Stack) string {
	var b strings.Builder
	for fr := range s.Frames() {
		b.WriteString(fr.Func + ";")
	}
	return b.String()
}

// short is a stack's innermost n frames outside the runtime, innermost first.
func short(s trace.Stack, n int) string {
	var parts []string
	for fr := range s.Frames() {
		if strings.HasPrefix(fr.Func, "runtime.") || strings.HasPrefix(fr.Func, "internal/") {
			continue
		}
		fn := fr.Func
		if i := strings.LastIndex(fn, "/"); i >= 0 {
			fn = fn[i+1:]
		}
		parts = append(parts, fn)
		if len(parts) == n {
			break
		}
	}
	return strings.Join(parts, " < ")
}

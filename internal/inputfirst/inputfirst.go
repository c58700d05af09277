// Package inputfirst lets a large background load give way while the operator is at the keys.
//
// At 50,000 pods the API server streaming the list and the workbench decoding it take both
// cores of a small machine, and a key press waited up to hundreds of milliseconds for a core
// (hack/benchfleet/FINDINGS.md). Pacing the load always would cost every start its
// speed; pacing it only while the operator presses keys costs the load time only when someone
// is waiting on the screen. The programs mark a Signal on each key, mouse press or paste; a load
// steps a Pacer once per item (the Kubernetes backend: each object of a watch's initial list,
// each sandbox a reset builds), and deferrable work checks Active (the memory release after a
// load).
package inputfirst

import (
	"sync/atomic"
	"time"
)

// Operator is the process's signal: every program of the process (the terminal's, each SSH
// session's) marks it, since they all share the process's cores with its loads.
var Operator Signal

// epoch makes the signal's times monotonic (time.Since reads the monotonic clock).
var epoch = time.Now()

// Signal records when the operator last gave input. The zero value has seen none. It is safe
// for concurrent use.
type Signal struct{ last atomic.Int64 } // time.Since(epoch) at the last input, plus one; 0 = never

// Mark records input now.
func (s *Signal) Mark() { s.markAt(time.Since(epoch)) }

// Active reports whether input came within DefaultWindow.
func (s *Signal) Active() bool { return s.ActiveWithin(DefaultWindow) }

// ActiveWithin reports whether input came within window.
func (s *Signal) ActiveWithin(window time.Duration) bool {
	return s.activeAt(time.Since(epoch), window)
}

func (s *Signal) markAt(t time.Duration) { s.last.Store(int64(t) + 1) }

// activeAt reports whether input came within window before now (both since epoch).
func (s *Signal) activeAt(now, window time.Duration) bool {
	last := s.last.Load()
	return last != 0 && now-time.Duration(last-1) < window
}

// Defaults of a Pacer: 4,000 items a second is 12.5 s for a 50,000-pod fleet if the operator
// keeps typing through all of it, 1.25 s for 5,000; one second covers the gaps between the keys
// of someone navigating.
const (
	DefaultRate   = 4000
	DefaultWindow = time.Second
)

// batch is how many items pass between two sleeps: one sleep per item would be too short for
// the timer to keep (4,000 a second is 250 µs each).
const batch = 40

// Pacer slows a load to Rate items a second while its Signal has seen input within Window, and
// lets it run unpaced otherwise. A nil Pacer or one without a Signal never waits. A Pacer is for
// one goroutine.
type Pacer struct {
	Signal *Signal
	Rate   int           // items a second while active (DefaultRate when 0)
	Window time.Duration // how long input keeps the pace (DefaultWindow when 0)

	// Sleep waits (nil: time.Sleep); a test sets it to see the pace without waiting.
	Sleep func(d time.Duration)

	n   int                  // items since the last sleep, while active
	now func() time.Duration // since epoch (tests replace it)
}

// Step is called once before each item of the load. While the operator is active it sleeps
// batch/Rate once every batch items; otherwise it returns at once (the cost of a clock read).
func (p *Pacer) Step() {
	if p == nil || p.Signal == nil {
		return
	}
	now := time.Since(epoch)
	if p.now != nil {
		now = p.now()
	}
	window := p.Window
	if window <= 0 {
		window = DefaultWindow
	}
	if !p.Signal.activeAt(now, window) {
		p.n = 0
		return
	}
	if p.n++; p.n < batch {
		return
	}
	p.n = 0
	rate := p.Rate
	if rate <= 0 {
		rate = DefaultRate
	}
	d := batch * time.Second / time.Duration(rate)
	if p.Sleep != nil {
		p.Sleep(d)
		return
	}
	time.Sleep(d)
}

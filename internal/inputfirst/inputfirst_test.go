package inputfirst

import (
	"testing"
	"time"
)

// fakeTime is a clock the pacer reads and its sleeps advance.
type fakeTime struct {
	now   time.Duration
	slept time.Duration
}

func (f *fakeTime) pacer(s *Signal) *Pacer {
	return &Pacer{Signal: s, Rate: 4000, Window: time.Second,
		now:   func() time.Duration { return f.now },
		Sleep: func(d time.Duration) { f.slept += d; f.now += d }}
}

func TestPacerRunsUnpacedWithoutInput(t *testing.T) {
	var f fakeTime
	var s Signal
	p := f.pacer(&s)
	for range 10_000 {
		p.Step()
	}
	if f.slept != 0 {
		t.Fatalf("slept %v with no input ever", f.slept)
	}
	var nilPacer *Pacer
	nilPacer.Step() // a backend without a signal: no panic, no wait
	(&Pacer{}).Step()
}

func TestPacerHoldsTheRateWhileTheOperatorTypes(t *testing.T) {
	f := fakeTime{now: time.Hour}
	var s Signal
	p := f.pacer(&s)
	s.markAt(f.now)
	for range 2000 { // the sleeps take 0.5 s: still within the window
		p.Step()
	}
	if want := 2000 * time.Second / 4000; f.slept != want {
		t.Fatalf("2,000 items while typing slept %v, want %v (4,000 a second)", f.slept, want)
	}
}

func TestPacerLetsGoOnceTheWindowPasses(t *testing.T) {
	f := fakeTime{now: time.Hour}
	var s Signal
	p := f.pacer(&s)
	s.markAt(f.now)
	f.now += time.Second // the last key is a window old
	for range 10_000 {
		p.Step()
	}
	if f.slept != 0 {
		t.Fatalf("slept %v after the window had passed", f.slept)
	}
	s.markAt(f.now) // a new key paces again
	for range batch {
		p.Step()
	}
	if f.slept == 0 {
		t.Fatal("a fresh key did not pace the load")
	}
}

func TestMarkUsesTheMonotonicClock(t *testing.T) {
	var s Signal
	if s.activeAt(time.Since(epoch), time.Second) {
		t.Fatal("a signal that never saw input is active")
	}
	s.Mark()
	if !s.ActiveWithin(time.Hour) { // an hour: a descheduled test must not fail it
		t.Fatal("input just marked is not active")
	}
	if s.ActiveWithin(0) {
		t.Fatal("input active within a zero window")
	}
	if s.activeAt(time.Since(epoch)+2*time.Second, time.Second) {
		t.Fatal("input two seconds old is active with a one-second window")
	}
}

// BenchmarkStepIdle is what every pod of a load pays when nobody types: one clock read.
func BenchmarkStepIdle(b *testing.B) {
	var s Signal
	p := &Pacer{Signal: &s}
	for b.Loop() {
		p.Step()
	}
}

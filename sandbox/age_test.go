package sandbox

import (
	"testing"
	"time"
)

// TestAgeChangesAtTheMomentTheAgeTextDoes walks the clock and checks that Age's text is constant
// until AgeChanges and different at it, across every unit.
func TestAgeChangesAtTheMomentTheAgeTextDoes(t *testing.T) {
	created := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for _, off := range []time.Duration{-3 * time.Second, 0, 1500 * time.Millisecond, 59 * time.Second, time.Minute,
		59*time.Minute + 30*time.Second, 3 * time.Hour, 47*time.Hour + 59*time.Minute, 48 * time.Hour, 9*24*time.Hour + time.Hour} {
		now := created.Add(off)
		next := AgeChanges(now, created)
		if !next.After(now) {
			t.Fatalf("at %v: next change %v is not after now", off, next.Sub(created))
		}
		if a, b := Age(now, created), Age(next.Add(-time.Nanosecond), created); a != b {
			t.Fatalf("at %v: age changed from %s to %s before %v", off, a, b, next.Sub(created))
		}
		if a, b := Age(now, created), Age(next, created); a == b {
			t.Fatalf("at %v: age %s did not change at %v", off, a, next.Sub(created))
		}
	}
	if !AgeChanges(created, time.Time{}).IsZero() {
		t.Fatal("an unknown creation time never changes")
	}
}

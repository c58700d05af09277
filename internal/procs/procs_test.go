package procs

import (
	"os"
	"runtime"
	"testing"
)

func TestChoose(t *testing.T) {
	cases := []struct {
		name          string
		current, cpus int
		operatorSet   bool
		want          int
	}{
		{"raised on a 2-core machine", 2, 2, false, Interactive},
		{"raised on one core", 1, 1, false, Interactive},
		{"left alone on a larger machine", 8, 8, false, 8},
		{"left alone at exactly enough", Interactive, Interactive, false, Interactive},
		{"a CPU quota below the cores is honoured", 1, 2, false, 1},
		{"an operator's setting wins", 1, 2, true, 1},
		{"an operator's setting at the cores wins", 2, 2, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := choose(c.current, c.cpus, c.operatorSet); got != c.want {
				t.Errorf("choose(%d, %d, %v) = %d, want %d", c.current, c.cpus, c.operatorSet, got, c.want)
			}
		})
	}
}

func TestForInteractiveSetsTheRuntime(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok { // e.g. set by a CI runner
		os.Unsetenv("GOMAXPROCS")
		t.Cleanup(func() { os.Setenv("GOMAXPROCS", v) })
	}
	cpus := runtime.NumCPU()

	runtime.GOMAXPROCS(cpus)
	want := max(cpus, Interactive)
	if got := ForInteractive(); got != want || runtime.GOMAXPROCS(0) != want {
		t.Errorf("GOMAXPROCS unset, %d CPUs: ForInteractive() = %d, runtime at %d; want %d", cpus, got, runtime.GOMAXPROCS(0), want)
	}

	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	if got := ForInteractive(); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("GOMAXPROCS=1 set by the operator: ForInteractive() = %d, runtime at %d; want 1", got, runtime.GOMAXPROCS(0))
	}
}

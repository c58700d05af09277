package procs

import (
	"runtime"
	"testing"
)

func TestForInteractive(t *testing.T) {
	cases := []struct {
		name string
		env  string // GOMAXPROCS in the environment ("" unset)
		now  int    // GOMAXPROCS before the call
		want int
	}{
		{"raised on a small machine", "", 2, Interactive},
		{"one core", "", 1, Interactive},
		{"left alone on a larger machine", "", 8, 8},
		{"an operator's setting wins", "1", 1, 1},
		{"an operator's setting wins above too", "6", 6, 6},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", c.env)
			runtime.GOMAXPROCS(c.now)
			if got := ForInteractive(); got != c.want {
				t.Errorf("ForInteractive() = %d, want %d", got, c.want)
			}
			if got := runtime.GOMAXPROCS(0); got != c.want {
				t.Errorf("GOMAXPROCS is %d after the call, want %d", got, c.want)
			}
		})
	}
}

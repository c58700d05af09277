package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets the test binary serve as the reference program, as benchfleet does.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == echoRefArg {
		if err := echoRef(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestReferenceAnswersEveryKey: the reference program flips its screen at each key, and
// refPress times each flip through tmux as the tool's presses are timed.
func TestReferenceAnswersEveryKey(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is needed")
		}
		t.Skip("no tmux")
	}
	b := &bench{width: 80, height: 10}
	p, err := b.startReference()
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	opened := false
	for i := range 4 {
		d, err := refPress(context.Background(), p, &opened)
		if err != nil {
			t.Fatalf("press %d: %v", i+1, err)
		}
		if d <= 0 {
			t.Fatalf("press %d timed %v", i+1, d)
		}
	}
	if s, _ := p.screen(); opened || !strings.Contains(s, refShut) {
		t.Fatalf("after four presses the reference shows %q", s)
	}
}

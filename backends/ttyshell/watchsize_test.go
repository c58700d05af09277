package ttyshell

import (
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestWatchSizeReportsEachWindowChange: a window change (SIGWINCH) reports the terminal's new
// size; after stop, none is reported.
func TestWatchSizeReportsEachWindowChange(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	sizes := make(chan [2]int, 4)
	stop := WatchSize(int(tty.Fd()), func(w, h int) { sizes <- [2]int{w, h} })
	for _, want := range [][2]int{{100, 30}, {132, 43}} {
		pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(want[0]), Rows: uint16(want[1])})
		syscall.Kill(syscall.Getpid(), syscall.SIGWINCH)
		select {
		case got := <-sizes:
			if got != want {
				t.Fatalf("size after a window change = %v, want %v", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no size reported for a window change to %v", want)
		}
	}
	stop()
	syscall.Kill(syscall.Getpid(), syscall.SIGWINCH)
	select {
	case got := <-sizes:
		t.Fatalf("a size (%v) was reported after stop", got)
	case <-time.After(200 * time.Millisecond):
	}
}

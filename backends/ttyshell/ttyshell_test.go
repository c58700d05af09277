package ttyshell

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/muesli/cancelreader"
)

// When the shell ends, the Read the backend still has in flight on the terminal ends with
// ErrCanceled, and the next key goes to whoever reads the terminal next (the workbench), not to
// the dead shell. Run with -race: closing the reader under that Read is a data race.
func TestStoppedShellLeavesTheNextKeyToTheWorkbench(t *testing.T) {
	for i := 0; i < 50; i++ {
		term, typist, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cr, err := cancelreader.NewReader(term)
		if err != nil {
			t.Fatal(err)
		}
		shell := &stdinReader{cr: cr}
		readErr := make(chan error, 1)
		go func() {
			_, err := shell.Read(make([]byte, 16))
			readErr <- err
		}()
		time.Sleep(time.Millisecond) // most rounds: the Read is waiting when the shell ends
		shell.stop()
		select {
		case err := <-readErr:
			if !errors.Is(err, cancelreader.ErrCanceled) {
				t.Fatalf("round %d: the shell's pending Read ended with %v, want ErrCanceled", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the shell's pending Read did not end", i)
		}
		if _, err := shell.Read(make([]byte, 16)); !errors.Is(err, cancelreader.ErrCanceled) {
			t.Fatalf("round %d: a Read after the shell ended: %v, want ErrCanceled", i, err)
		}

		workbench, err := cancelreader.NewReader(term)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := typist.Write([]byte("q")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		n, err := workbench.Read(buf)
		if err != nil || string(buf[:n]) != "q" {
			t.Fatalf("round %d: the workbench read %q, %v; want the operator's q", i, buf[:n], err)
		}
		workbench.Close()
		term.Close()
		typist.Close()
	}
}

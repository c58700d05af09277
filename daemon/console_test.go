package daemon

import (
	"io"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// TestConsoleHandsWindowChangesToTheShell: while a shell holds the terminal, window changes go
// to it without waiting for it to read (the newest wins), none after it gave the terminal
// back, and the client's input ending tells the shell the client is gone.
func TestConsoleHandsWindowChangesToTheShell(t *testing.T) {
	keys, typist := io.Pipe()
	c, err := newConsole(Terminal{In: keys, Out: io.Discard, Cols: 200, Rows: 50, Frames: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	h := c.HandOver()
	if h.Size != (backends.TermSize{Width: 200, Height: 50}) {
		t.Errorf("the shell starts at %+v; want the client's 200x50", h.Size)
	}
	resized := make(chan struct{})
	go func() {
		c.resize(100, 30)
		c.resize(120, 40) // the shell has not read the first: this must not wait for it
		close(resized)
	}()
	select {
	case <-resized:
	case <-time.After(5 * time.Second):
		t.Fatal("window changes waited for the shell to read them")
	}
	if got := <-h.Resize; got != (backends.TermSize{Width: 120, Height: 40}) {
		t.Errorf("the shell got %+v; want the newest size, 120x40", got)
	}
	h.Back()
	c.resize(90, 20) // after the shell: to the program only
	if s, open := <-h.Resize; open {
		t.Errorf("the shell got %+v after it gave the terminal back", s)
	}
	select {
	case <-h.Gone:
		t.Fatal("the client is reported gone while its input is open")
	default:
	}
	typist.Close()
	select {
	case <-h.Gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's input ended and the shell was not told it is gone")
	}
}

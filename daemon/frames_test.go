package daemon

import (
	"io"
	"testing"
	"time"
)

// TestFrameWriterNeverBlocksAndRedrawsAfterDrops: a client that does not read never blocks the
// program's writes; frames past the bound are dropped, and once the client reads again a full
// redraw is asked for.
func TestFrameWriterNeverBlocksAndRedrawsAfterDrops(t *testing.T) {
	pr, pw := io.Pipe()
	resumed := make(chan struct{}, 1)
	f := NewFrameWriter(pw, 2)
	f.OnResume = func() { resumed <- struct{}{} }
	defer f.Close()
	done := make(chan struct{})
	go func() {
		for range 100 {
			f.Write([]byte("frame"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("writes blocked on a client that does not read")
	}
	if !f.dropped.Load() {
		t.Fatal("100 frames to a frozen client with room for 2: none dropped")
	}
	go io.Copy(io.Discard, pr) // the client reads again
	select {
	case <-resumed:
	case <-time.After(5 * time.Second):
		t.Fatal("no full redraw asked for after the client caught up")
	}
}

package daemon

import (
	"bytes"
	"io"
	"sync"
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

// lockedBuffer is a client that reads everything, in order.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFrameWriterHoldKeepsOrderAndRedraws: a holder (a shell) writes after every frame queued
// before Hold returned, nothing of the program's reaches the client while it holds, and the
// release asks for a full redraw, after which frames flow again.
func TestFrameWriterHoldKeepsOrderAndRedraws(t *testing.T) {
	client := &lockedBuffer{}
	slow := &gate{w: client, open: make(chan struct{})}
	f := NewFrameWriter(slow, 8)
	defer f.Close()
	resumed := make(chan struct{}, 1)
	f.OnResume = func() { resumed <- struct{}{} }
	for _, fr := range []string{"f1;", "f2;", "f3;"} {
		f.Write([]byte(fr))
	}
	held := make(chan func())
	go func() { held <- f.Hold() }()
	select {
	case <-held:
		t.Fatal("Hold returned before the queued frames reached the client")
	case <-time.After(100 * time.Millisecond):
	}
	close(slow.open)
	var release func()
	select {
	case release = <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("Hold never returned")
	}
	f.Write([]byte("during;")) // the program drawing while the shell holds the client
	slow.Write([]byte("shell;"))
	time.Sleep(50 * time.Millisecond)
	if got := client.String(); got != "f1;f2;f3;shell;" {
		t.Fatalf("client got %q while held; want the queued frames, then the shell's output", got)
	}
	release()
	select {
	case <-resumed:
	case <-time.After(5 * time.Second):
		t.Fatal("no full redraw asked for after the hold")
	}
	f.Write([]byte("after;"))
	deadline := time.Now().Add(5 * time.Second)
	for client.String() != "f1;f2;f3;shell;after;" {
		if time.Now().After(deadline) {
			t.Fatalf("client got %q; want frames to flow again after the hold", client.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gate is a client that reads nothing until open is closed.
type gate struct {
	w    io.Writer
	open chan struct{}
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.open
	return g.w.Write(p)
}

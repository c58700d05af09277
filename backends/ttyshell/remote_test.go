package ttyshell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// remote is a client's terminal as the daemon hands it over: its own stream, size and changes.
type remote struct {
	frames, stream bytes.Buffer // what the program drew; what the shell wrote
	resize         chan backends.TermSize
	gone           chan struct{}
	handed, back   int
}

func (r *remote) Write(p []byte) (int, error) { return r.frames.Write(p) }

func (r *remote) HandOver() Handed {
	r.handed++
	return Handed{Out: &r.stream, Size: backends.TermSize{Width: 132, Height: 43}, Resize: r.resize, Gone: r.gone, Back: func() { r.back++ }}
}

// TestRemoteTerminalIsHandedOver: on a remote terminal the shell writes to the stream it is
// handed (not the program's frames), starts at the client's size, gets its window changes,
// reads the keys from the first, and gives the terminal back when it ends; after it, the next
// key is left in the input for the workbench.
func TestRemoteTerminalIsHandedOver(t *testing.T) {
	keys, typist, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	defer typist.Close()
	r := &remote{resize: make(chan backends.TermSize, 1)}
	cmd := &Command{Ctx: context.Background(), Open: func(ctx context.Context, sr backends.ShellRequest) (backends.ShellResult, error) {
		if sr.Size != (backends.TermSize{Width: 132, Height: 43}) {
			t.Errorf("starting size %+v; want the client's 132x43", sr.Size)
		}
		r.resize <- backends.TermSize{Width: 80, Height: 20}
		if s := <-sr.Resize; s != (backends.TermSize{Width: 80, Height: 20}) {
			t.Errorf("window change %+v; want 80x20", s)
		}
		typist.Write([]byte("ls\r"))
		buf := make([]byte, 16)
		n, err := sr.Stdin.Read(buf)
		if err != nil || string(buf[:n]) != "ls\r" {
			t.Errorf("the shell read %q, %v; want the keys from the first", buf[:n], err)
		}
		io.WriteString(sr.Stdout, "out\n")
		return backends.ShellResult{ExitCode: 0}, nil
	}}
	cmd.SetStdin(keys)
	cmd.SetStdout(r)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if r.stream.String() != "out\n" || r.frames.Len() != 0 {
		t.Errorf("shell output went to the stream %q and the frames %q; want all of it on the stream", r.stream.String(), r.frames.String())
	}
	if r.handed != 1 || r.back != 1 {
		t.Errorf("handed over %d times, given back %d; want once each", r.handed, r.back)
	}
	typist.Write([]byte("q"))
	done := make(chan string, 1)
	go func() {
		buf := make([]byte, 16)
		n, _ := keys.Read(buf)
		done <- string(buf[:n])
	}()
	select {
	case got := <-done:
		if got != "q" {
			t.Errorf("the workbench read %q after the shell; want q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the key after the shell never reached the workbench")
	}
}

// TestRemoteClientGoneEndsTheShell: a client that goes away while its shell runs ends it (the
// shell's context), as the operator's exit would; it is not left holding the sandbox.
func TestRemoteClientGoneEndsTheShell(t *testing.T) {
	keys, typist, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	defer typist.Close()
	r := &remote{gone: make(chan struct{})}
	cmd := &Command{Ctx: context.Background(), Open: func(ctx context.Context, sr backends.ShellRequest) (backends.ShellResult, error) {
		close(r.gone)
		select {
		case <-ctx.Done():
			return backends.ShellResult{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return backends.ShellResult{}, nil
		}
	}}
	cmd.SetStdin(keys)
	cmd.SetStdout(r)
	if err := cmd.Run(); !errors.Is(err, context.Canceled) {
		t.Fatalf("shell of a client gone = %v; want it ended (context canceled)", err)
	}
	if r.back != 1 {
		t.Errorf("given back %d times; want once", r.back)
	}
}

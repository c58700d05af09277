package kubernetes

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
)

// lockedBuf is a bytes.Buffer the shell writes to while the test reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClusterShellTTYResizeAndExitCode opens the Shell through the API server's pods/exec with
// a TTY (kwok's ClusterExec gives the command a real pty on the host, and applies the terminal
// size queue to it): the starting size and a resize both show in `stty size`, typed commands
// echo and run, and the shell's exit code comes back. With no Cmd the backend picks `bash -l`
// because `command -v bash` succeeds where kwok runs commands (the host).
func TestClusterShellTTYResizeAndExitCode(t *testing.T) {
	c := kubetest.Need(t)
	b, sid, _ := runningRelease(t, c)
	in, typist := io.Pipe()
	defer typist.Close()
	out := &lockedBuf{}
	resize := make(chan backends.TermSize, 1)
	type result struct {
		res backends.ShellResult
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		res, err := b.Shell(ctx, sid, backends.ShellRequest{Stdin: in, Stdout: out,
			Size: backends.TermSize{Width: 80, Height: 24}, Resize: resize})
		done <- result{res, err}
	}()
	// kwok applies sizes asynchronously to the pty: ask again until the answer shows.
	ask := func(cmd, want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the shell's output after %q: %q", want, cmd, out.String())
			}
			if _, err := io.WriteString(typist, cmd+"\n"); err != nil {
				t.Fatalf("type: %v", err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	ask("stty size", "24 80")
	resize <- backends.TermSize{Width: 100, Height: 30}
	ask("stty size", "30 100")
	ask("echo rk-$((6*7))", "rk-42")
	if !strings.Contains(out.String(), "echo rk-$((6*7))") {
		t.Errorf("the TTY did not echo the typed command: %q", out.String())
	}
	if _, err := io.WriteString(typist, "exit 7\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.res.ExitCode != 7 || strings.Join(r.res.Cmd, " ") != "bash -l" || !strings.Contains(r.res.Member, sid[strings.LastIndex(sid, "/")+1:]) {
			t.Errorf("shell ended: %+v %v", r.res, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shell did not end on exit")
	}

	// A command that is not a shell, with no stdin (kwok v0.8.0 crashed on a TTY without a
	// stdin stream before Shell always opened one): its output through the TTY at the starting
	// size, and its exit code. kwok (v0.8.0, debugging_exec_other.go) applies the size to its pty
	// asynchronously and closes the pty as soon as the command exits, racing its own copy of the
	// output: under load "stty size; exit 3" printed nothing. The command waits for the size and
	// lingers a second so the output this test reads is what our side delivered.
	out2 := &lockedBuf{}
	waitSize := `for i in $(seq 100); do s=$(stty size); [ "$s" = "43 132" ] && break; sleep 0.1; done; echo "$s"; sleep 1; exit 3`
	res, err := b.Shell(ctx, sid, backends.ShellRequest{Member: "default", Cmd: []string{"sh", "-c", waitSize}, Stdout: out2,
		Size: backends.TermSize{Width: 132, Height: 43}})
	if err != nil || res.ExitCode != 3 || !strings.Contains(out2.String(), "43 132") {
		t.Errorf("sh -c without stdin: %+v %v, output %q", res, err, out2.String())
	}
	if _, err := b.Exec(ctx, sid, backends.ExecRequest{Cmd: []string{"true"}}); err != nil {
		t.Errorf("kwok no longer answers after the TTY without stdin: %v", err)
	}
}

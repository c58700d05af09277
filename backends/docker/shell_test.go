package docker

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A shell runs with a real TTY: the member has no bash so sh is chosen (Inspect's rule), the
// terminal has the size asked for and follows a resize, and the exit code comes back.
func TestShellTTYResizeAndExitCode(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-shell-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	in, typist := io.Pipe()
	out := &syncBuf{}
	resize := make(chan backends.TermSize, 1)
	type result struct {
		res backends.ShellResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := b.Shell(context.Background(), b.SandboxID(project), backends.ShellRequest{Stdin: in, Stdout: out,
			Size: backends.TermSize{Width: 80, Height: 24}, Resize: resize})
		done <- result{res, err}
	}()
	waitOut := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the shell's output: %q", want, out.String())
			}
		}
	}
	io.WriteString(typist, "stty size\n")
	waitOut("24 80")
	resize <- backends.TermSize{Width: 100, Height: 30}
	time.Sleep(300 * time.Millisecond)
	io.WriteString(typist, "stty size\n")
	waitOut("30 100")
	io.WriteString(typist, "exit 7\n")
	select {
	case r := <-done:
		if r.err != nil || r.res.ExitCode != 7 || strings.Join(r.res.Cmd, " ") != "sh" || r.res.Member != project+"-default-1" {
			t.Errorf("shell ended: %+v %v", r.res, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("shell did not end on exit")
	}
}

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// A workbench whose terminal hangs up ends (its watches closed, its cache saved as on q) by
// reading the end of its input, not only by the hang-up signal: started with SIGHUP ignored
// (nohup, a supervisor or runner that ignores it; ignored signals stay so across exec), it
// went on without a terminal, its watches open, until someone found and killed it.
func TestWorkbenchEndsWhenItsTerminalHangsUp(t *testing.T) {
	rk, _ := crashBinaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	// A Docker endpoint nobody listens on (loopback): the workbench starts, its backend down.
	writeFile(t, cfg, "docker:\n  - name: lab\n    host: tcp://127.0.0.1:1\n")
	statePath := filepath.Join(dir, "state.db")
	// sh leads the terminal's session and ignores the hang-up, as the workbench it starts does;
	// the trailing ':' keeps it from exec'ing the workbench, so it waits for it.
	cmd := exec.Command("/bin/sh", "-c", `trap '' HUP; "$0" --config "$1" --state "$2"; :`, rk, cfg, statePath)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin", "TERM=xterm-256color", "LANG=C.UTF-8"}
	tty := startOnTerminal(t, cmd)
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) // its session's group
	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(shown(), "sandboxes") {
		if time.Now().After(deadline) {
			tty.Close()
			t.Fatalf("no first frame within 30 s; output:\n%q", shown())
		}
		time.Sleep(20 * time.Millisecond)
	}

	tty.Close() // the terminal hangs up: the workbench reads the end of its input
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }() // sh, ignoring the hang-up too, waits for it
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the workbench still runs 30 s after its terminal hung up")
	}
}

// startOnTerminal starts cmd as the leader of a new session on a new 120×40 terminal and
// returns the terminal's master side. Its reads are through the runtime's poller, so that Close
// hangs the terminal up at once: a blocking read in progress would hold the descriptor open.
func startOnTerminal(t *testing.T, cmd *exec.Cmd) *os.File {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	fd, err := syscall.Dup(int(ptmx.Fd()))
	ptmx.Close()
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd) // the child must not hold the master open: its close is the hang-up
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	master := os.NewFile(uintptr(fd), "ptmx")
	if err := pty.Setsize(tty, &pty.Winsize{Cols: 120, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		master.Close()
		t.Fatal(err)
	}
	return master
}

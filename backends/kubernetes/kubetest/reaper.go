package kubetest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// The reaper is this test binary re-executed with reaperEnv set. It reads "pid N EXE" and
// "dir PATH" lines on stdin; when stdin closes without a final "done" line (the test process
// died: a panic, a timeout, SIGKILL), it kills the recorded processes and their process
// groups and removes the recorded directories. This is what keeps a panicking test from
// orphaning etcd, kube-apiserver, kwok, the scheduler or the controller manager.
const reaperEnv = "RANGEKEEPER_KUBETEST_REAPER"

type reaper struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

func startReaper() (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // outlive a kill of our group
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &reaper{cmd: cmd, in: in}, nil
}

func (r *reaper) watchPID(pid int) {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	fmt.Fprintf(r.in, "pid %d %s\n", pid, exe)
}

func (r *reaper) watchDir(dir string) { fmt.Fprintf(r.in, "dir %s\n", dir) }

// done tells the reaper that everything was stopped normally.
func (r *reaper) done() {
	fmt.Fprintln(r.in, "done")
	_ = r.in.Close()
	_ = r.cmd.Wait()
}

// runReaper is the reaper process's main.
func runReaper() {
	type proc struct {
		pid int
		exe string
	}
	var procs []proc
	var dirs []string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 3)
		switch {
		case f[0] == "done":
			return
		case f[0] == "pid" && len(f) == 3:
			if pid, err := strconv.Atoi(f[1]); err == nil {
				procs = append(procs, proc{pid, f[2]})
			}
		case f[0] == "dir" && len(f) >= 2:
			dirs = append(dirs, strings.Join(f[1:], " "))
		}
	}
	for _, p := range procs {
		// Guard against PID reuse: only kill a process still running the recorded binary.
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid)); exe != p.exe {
			continue
		}
		_ = syscall.Kill(-p.pid, syscall.SIGKILL) // its process group (envtest uses Setpgid)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

// childPIDs lists the direct children of this process (envtest does not expose its PIDs).
func childPIDs() []int {
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// stat is "pid (comm) state ppid ...": comm may contain spaces, so parse after ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == me {
				out = append(out, pid)
			}
		}
	}
	return out
}

package kubetest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

const panicEnv = "RANGEKEEPER_KUBETEST_PANIC"

// TestPanicLeavesNoOrphans runs a child test that starts the control plane, prints its
// process IDs and temporary directories, and panics; all of them must be gone shortly after.
func TestPanicLeavesNoOrphans(t *testing.T) {
	if _, err := AssetsDir(); err != nil {
		Need(t) // skips, or fails under CI=true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicHelper$", "-test.v")
	cmd.Env = append(os.Environ(), panicEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err == nil {
		t.Fatalf("the helper did not panic:\n%s", out.String())
	}
	var pids []int
	var dirs []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "kubetest-dirs:"); ok {
			dirs = strings.Fields(rest)
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "kubetest-pids:"); ok {
			for _, f := range strings.Fields(rest) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	if len(pids) < 5 { // etcd, kube-apiserver, kwok, kube-scheduler, kube-controller-manager
		t.Fatalf("helper reported pids %v, want at least 5:\n%s", pids, out.String())
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d (%s) outlived the panicking test", pid, exe(pid))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if len(dirs) != 2 {
		t.Fatalf("helper reported dirs %v, want 2", dirs)
	}
	for _, d := range dirs {
		for {
			if _, err := os.Stat(d); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("temporary directory %s outlived the panicking test", d)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestPanicHelper only runs as the child of TestPanicLeavesNoOrphans.
func TestPanicHelper(t *testing.T) {
	if os.Getenv(panicEnv) == "" {
		t.Skip("helper for TestPanicLeavesNoOrphans")
	}
	c := Need(t)
	var pids []string
	for _, pid := range childPIDs() {
		if pid != c.reaper.cmd.Process.Pid {
			pids = append(pids, strconv.Itoa(pid))
		}
	}
	fmt.Println("kubetest-pids:", strings.Join(pids, " "))
	fmt.Println("kubetest-dirs:", c.dir, c.env.WebhookInstallOptions.LocalServingCertDir)
	panic("kubetest: deliberate panic to test the reaper")
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

func exe(pid int) string {
	p, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return p
}

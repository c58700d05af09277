package dockerstage_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/dockerstage"
)

// The signal test re-executes this test binary as a child that runs verify the way the CLI
// does (a signal-cancelled context); these variables carry its inputs.
const (
	childEnv     = "RK_VERIFY_CHILD"
	childSpec    = "RK_VERIFY_CHILD_SPEC"
	childImage   = "RK_VERIFY_CHILD_IMAGE"
	childRun     = "RK_VERIFY_CHILD_RUN"
	childTestRun = "RK_VERIFY_CHILD_TESTRUN"
	childBins    = "RK_VERIFY_CHILD_BINS"
)

// childMain runs one verify in this process and prints each step start and the result.
func childMain() int {
	dockertest.RunID = os.Getenv(childTestRun)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(os.Getenv(childBins), name))
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(2)
		}
		return b
	}
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	d, err := dockerstage.New(dockerstage.Options{Backend: b, Canary: func() ([]byte, error) { return read("rangekeeper-canary"), nil },
		Labels: dockertest.Labels(nil), ImageLabels: dockertest.Labels(nil), ImageRepo: testImageRepo})
	if err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	o := verify.Options{Spec: os.Getenv(childSpec), Env: map[string]string{"IMAGE": os.Getenv(childImage)},
		RunID: os.Getenv(childRun), Timeout: 3 * time.Minute,
		Progress: func(s verify.Step) {
			if s.Status == "" {
				fmt.Println("STEP", s.Name)
			}
		}}
	dir, err := os.MkdirTemp("", "rkverify-child-")
	if err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	defer os.RemoveAll(dir)
	prober, db, err := throughLayer(b, read("rangekeeper-probe"), dir)
	if err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	defer db.Close()
	res := verify.Run(ctx, o, verify.Deps{Driver: d, Prober: prober})
	out, _ := json.Marshal(struct {
		Exit     int
		Reason   string
		Teardown verify.Teardown
	}{res.Exit, res.Reason, res.Teardown})
	fmt.Println("RESULT", string(out))
	return res.Exit
}

// TestSignalTearsDown sends a real SIGINT and SIGTERM to a child process in the middle of a
// run (once the sandbox and its canaries are up) and counts what the engine still holds.
func TestSignalTearsDown(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		step string
	}{{syscall.SIGINT, "probe"}, {syscall.SIGTERM, "wait"}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			binaries(t)
			runID := verify.NewRunID()
			t.Cleanup(func() { _, _, _ = deps(t).Driver.Teardown(context.Background(), runID) })
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=1", childSpec+"=testdata/hardened.yaml", childImage+"="+dockertest.Image(t),
				childRun+"="+runID, childTestRun+"="+dockertest.RunID, childBins+"="+binDir)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			lines := make(chan string, 64)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
				done <- cmd.Wait()
			}()
			var result string
			deadline := time.After(3 * time.Minute)
			signalled := false
		loop:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						break loop
					}
					if l == "STEP "+tc.step && !signalled {
						if n := remaining(t, runID); n.Containers == 0 {
							t.Errorf("nothing was up when the signal was sent")
						}
						if err := cmd.Process.Signal(tc.sig); err != nil {
							t.Fatal(err)
						}
						signalled = true
					}
					if r, ok := strings.CutPrefix(l, "RESULT "); ok {
						result = r
					}
				case <-deadline:
					_ = cmd.Process.Kill()
					t.Fatal("child did not finish")
				}
			}
			err = <-done
			var ee *exec.ExitError
			if !signalled || !errors.As(err, &ee) || ee.ExitCode() != verify.ExitCouldNotRun {
				t.Fatalf("signalled %v, child exit %v, result %s", signalled, err, result)
			}
			if !strings.Contains(result, "interrupted during "+tc.step) {
				t.Errorf("result does not say it was interrupted: %s", result)
			}
			if n := remaining(t, runID); !n.Zero() {
				t.Errorf("after %s the engine still holds %v with the run label", tc.sig, n)
			}
		})
	}
}

// TestPanicTearsDown: a part that panics mid-run (here the prober) ends the run as "could not
// verify" with the panic named, and teardown still removes everything.
func TestPanicTearsDown(t *testing.T) {
	o := options(t, "hardened.yaml", nil)
	d := deps(t)
	d.Prober = verify.ProberFunc(func(context.Context, verify.ProbeRequest) (probe.Result, error) {
		if n := remaining(t, o.RunID); n.Containers == 0 {
			t.Errorf("nothing was up when the prober panicked")
		}
		panic("simulated panic in the prober")
	})
	res := verify.Run(context.Background(), o, d)
	if res.Exit != verify.ExitCouldNotRun || !strings.Contains(res.Reason, "internal error during probe: simulated panic") {
		t.Fatalf("exit %d reason %q", res.Exit, res.Reason)
	}
	if n := remaining(t, o.RunID); !n.Zero() || !res.Teardown.Remaining.Zero() {
		t.Errorf("after the panic the engine still holds %v (teardown %+v)", n, res.Teardown)
	}
}

// TestDeadlineTearsDown: a member that never becomes healthy ends the run at the deadline with
// the reason, and teardown still removes everything.
func TestDeadlineTearsDown(t *testing.T) {
	o := options(t, "never-ready.yaml", nil)
	// Long enough for the stand-up on a loaded 2-core host (15 s once ran out during up there),
	// so the deadline falls in wait, whose message names what was not ready.
	o.Timeout = 40 * time.Second
	res := run(t, o)
	if res.Exit != verify.ExitCouldNotRun || !strings.Contains(res.Reason, "deadline of 40s reached during wait") ||
		!strings.Contains(res.Reason, "starting (healthcheck)") {
		t.Fatalf("exit %d reason %q", res.Exit, res.Reason)
	}
}

// TestKeepLeavesItAndSaysHow: --keep leaves the run for inspection and prints how to remove it;
// the printed command's label selects exactly what is left.
func TestKeepLeavesItAndSaysHow(t *testing.T) {
	o := options(t, "bridge.yaml", nil)
	o.Keep = true
	d := deps(t)
	t.Cleanup(func() { _, _, _ = d.Driver.Teardown(context.Background(), o.RunID) })
	res := verify.Run(context.Background(), o, d)
	if !res.Teardown.Kept || !strings.Contains(res.Teardown.Command, "verify --down "+o.RunID) {
		t.Fatalf("teardown %+v", res.Teardown)
	}
	if n := remaining(t, o.RunID); n.Containers < 2 || n.Networks < 3 {
		t.Fatalf("kept only %v", n)
	}
	removed, left, err := d.Driver.Teardown(context.Background(), o.RunID)
	if err != nil || !left.Zero() || removed.Containers == 0 {
		t.Fatalf("down: removed %v left %v err %v", removed, left, err)
	}
}

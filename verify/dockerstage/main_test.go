package dockerstage_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/composeup"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/dockerstage"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	code := m.Run()
	dockertest.Sweep(dockertest.RunID)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds the probe and the canary the way the Makefile does, once per test process.
func binaries(t testing.TB) (probeBin, canaryBin []byte) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "rkverify-bin-")
		if buildErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		for _, pkg := range []string{"rangekeeper-probe", "rangekeeper-canary"} {
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(binDir, pkg), "./cmd/"+pkg)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(binDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return read("rangekeeper-probe"), read("rangekeeper-canary")
}

// deps wires the real Docker backend, the canary and today's probe pipeline.
func deps(t testing.TB) verify.Deps {
	t.Helper()
	dockertest.Engine(t)
	probeBin, canaryBin := binaries(t)
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	d, err := dockerstage.New(dockerstage.Options{Backend: b, Canary: func() ([]byte, error) { return canaryBin, nil },
		Labels: dockertest.Labels(nil), ImageLabels: dockertest.Labels(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return verify.Deps{Driver: d, Prober: dockerstage.Prober(b, func() ([]byte, error) { return probeBin, nil })}
}

// options are a run of testdata/spec with the test image and extra variables.
func options(t testing.TB, spec string, vars map[string]string) verify.Options {
	env := map[string]string{"IMAGE": dockertest.Image(t)}
	for k, v := range vars {
		env[k] = v
	}
	return verify.Options{Spec: filepath.Join("testdata", spec), Env: env, RunID: verify.NewRunID(), Timeout: 3 * time.Minute,
		FailOn: catalog.SeverityCritical}
}

// remaining counts what still carries a run's label on the engine.
func remaining(t testing.TB, runID string) composeup.Counts {
	t.Helper()
	n, err := composeup.Count(context.Background(), dockertest.Engine(t), verify.LabelRun+"="+runID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// run verifies and asserts the engine holds nothing of the run afterwards.
func run(t *testing.T, o verify.Options) verify.Result {
	t.Helper()
	d := deps(t)
	t.Cleanup(func() { _, _, _ = d.Driver.Teardown(context.Background(), o.RunID) })
	res := verify.Run(context.Background(), o, d)
	if n := remaining(t, o.RunID); !n.Zero() {
		t.Errorf("after the run the engine still holds %v with the run label", n)
	}
	if !res.Teardown.Remaining.Zero() || res.Teardown.Removed.Containers == 0 {
		t.Errorf("teardown report %+v", res.Teardown)
	}
	return res
}

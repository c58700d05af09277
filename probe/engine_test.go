package probe_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/internal/staticbin/staticbintest"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dockertest.Sweep(dockertest.RunID)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

var (
	backendOnce sync.Once
	backendVal  *docker.Backend
	backendErr  error
)

// dockerBackend is the real Docker backend (its Exec and CopyTo are what delivery uses in
// production) on the local engine.
func dockerBackend(t testing.TB) *docker.Backend {
	t.Helper()
	dockertest.Engine(t)
	backendOnce.Do(func() { backendVal, backendErr = docker.New(docker.Endpoint{}, docker.Options{}) })
	if backendErr != nil {
		t.Fatal(backendErr)
	}
	return backendVal
}

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
)

// probeBinary builds cmd/rangekeeper-probe the way the Makefile does (static, stripped) once
// per test process.
func probeBinary(t testing.TB) (string, []byte) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rkprobe-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = staticbintest.Build(dir, "rangekeeper-probe")
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	return binPath, b
}

// probeBackend is what the tests need of the Docker backend.
type probeBackend interface {
	backends.Executor
	backends.Copier
	SandboxID(project string) string
}

func execReq(cmd ...string) backends.ExecRequest {
	return backends.ExecRequest{Member: "default", Cmd: cmd, Timeout: 30 * time.Second}
}

func verdictVersions() verdict.Versions { return verdict.Versions{} }

package dockerstage_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/composeup"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/internal/staticbin/staticbintest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
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
		for _, pkg := range []string{"rangekeeper-probe", "rangekeeper-canary"} {
			if _, buildErr = staticbintest.Build(binDir, pkg); buildErr != nil {
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

// testImageRepo is this test process's own canary image repository (removed at exit by its run label).
var testImageRepo = dockertest.ImageRepo("verify-canary")

// deps wires the real Docker backend, the canary and the probe pipeline behind an action layer.
func deps(t testing.TB) verify.Deps {
	t.Helper()
	d, _ := depsDB(t)
	return d
}

// depsDB is deps with the state file the layer journals to and keeps probe history in.
func depsDB(t testing.TB) (verify.Deps, *state.DB) {
	t.Helper()
	dockertest.Engine(t)
	probeBin, canaryBin := binaries(t)
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	d, err := dockerstage.New(dockerstage.Options{Backend: b, Canary: func() ([]byte, error) { return canaryBin, nil },
		Labels: dockertest.Labels(nil), ImageLabels: dockertest.Labels(nil), ImageRepo: testImageRepo})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prober, db, err := throughLayer(b, probeBin, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return verify.Deps{Driver: d, Prober: prober}, db
}

// throughLayer is the CLI's road to the probe: an action layer journaling to a state file in
// dir (its host locks there too), whose probe pipeline verify's probes go through.
func throughLayer(b *docker.Backend, probeBin []byte, dir string) (verify.Prober, *state.DB, error) {
	db, err := state.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		return nil, nil, err
	}
	who := action.Identity{Operator: "verify-test", Transport: action.TransportStandalone}
	l := action.New(noFleet{}, db, action.Options{Identity: who, LockDir: dir,
		Prober: &probe.Pipeline{Binary: probeBin, History: db}})
	return verify.LayerProber(l, b, who), db, nil
}

// noFleet resolves nothing: the layer knows only the sandbox verify stages.
type noFleet struct{}

func (noFleet) Lookup(string) (backends.Backend, backends.Sandbox, bool) {
	return nil, backends.Sandbox{}, false
}
func (noFleet) Fleet() []backends.Sandbox { return nil }

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
	d, db := depsDB(t)
	t.Cleanup(func() { _, _, _ = d.Driver.Teardown(context.Background(), o.RunID) })
	res := verify.Run(context.Background(), o, d)
	if len(res.Probes) > 0 { // the probe went through the layer: journaled, its report in history
		es, err := db.Journal(state.JournalQuery{Target: res.SandboxID})
		if err != nil || len(es) < 2 || len(es)%2 != 0 {
			t.Errorf("the probe's journal entries %+v, %v", es, err)
		}
		for _, e := range es { // one probe per member, and a repeat where the outside canary was reached
			if e.Action != "probe" || e.Operator != "verify-test" || e.Phase == state.PhaseOutcome && e.Outcome != state.OutcomeOK {
				t.Errorf("journal entry %+v", e)
			}
		}
		if recs, err := db.Probes(res.SandboxID, 0); err != nil || len(recs) != len(es)/2 {
			t.Errorf("the probe's history %d, %v; want one per probe", len(recs), err)
		}
	}
	if n := remaining(t, o.RunID); !n.Zero() {
		t.Errorf("after the run the engine still holds %v with the run label", n)
	}
	if !res.Teardown.Remaining.Zero() || res.Teardown.Removed.Containers == 0 {
		t.Errorf("teardown report %+v", res.Teardown)
	}
	return res
}

// runSteady runs verify as its user is told to when a contact to the outside canary proved
// transient ("run verify again"): once more. The other tests create bridge networks on this
// engine all the time, and on Docker 20.10 each creation opens the window verify names.
func runSteady(t *testing.T, o verify.Options) verify.Result {
	t.Helper()
	res := run(t, o)
	if res.Exit != verify.ExitHolds && strings.Contains(res.Reason, "a transient contact") {
		t.Logf("a transient contact; verify again, as it asks: %s", res.Reason)
		res = run(t, o)
	}
	return res
}

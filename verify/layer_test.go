package verify_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
)

// execBackend is a backend with exec and copy, so the layer lets a probe run on it (the probe
// itself is layerProber's).
type execBackend struct{}

func (execBackend) Name() string                                            { return "fake:test" }
func (execBackend) Kind() backends.Kind                                     { return "fake" }
func (execBackend) Watch(ctx context.Context, _ func(backends.Event)) error { <-ctx.Done(); return nil }
func (execBackend) Exec(context.Context, string, backends.ExecRequest) (backends.ExecResult, error) {
	return backends.ExecResult{}, nil
}
func (execBackend) CopyTo(context.Context, string, string, string, []byte, int64) error { return nil }
func (execBackend) CopyFrom(context.Context, string, string, string) ([]byte, error)    { return nil, nil }

// layerProber is the layer's prober (action.Prober) answering with verify's fake prober, so the
// targets verify asks for must travel through probe.Request.
type layerProber struct {
	inner verify.Prober
	mu    sync.Mutex
	seen  []string
}

func (p *layerProber) Probe(ctx context.Context, _ backends.Backend, sb backends.Sandbox, req probe.Request) (probe.Report, error) {
	p.mu.Lock()
	p.seen = append(p.seen, sb.ID+"/"+req.Member)
	p.mu.Unlock()
	if req.Targets == nil {
		return probe.Report{}, context.Canceled // verify's targets were lost on the way
	}
	res, err := p.inner.Probe(ctx, verify.ProbeRequest{SandboxID: sb.ID, Member: req.Member, Targets: *req.Targets})
	return probe.Assess(res, nil, nil, verdict.Versions{}), err
}

// TestRunActionThroughTheLayer: a run through the action layer is journaled (intent with the
// run and expectation, outcome with the measured profile and exit status) by who asked, its
// probe is a journaled probe action on the staged sandbox carrying verify's own targets, and its
// JSON result is in the probe history under the spec's key; read-only mode refuses the run
// before anything is stood up, with a bad-input result saying why.
func TestRunActionThroughTheLayer(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	alice := action.Identity{Operator: "alice", Transport: action.TransportSSH}
	lp := &layerProber{inner: fakeProber(t, map[string]bool{"default 198.51.100.1:100": true}, nil)}
	l := action.New(noFleet{}, db, action.Options{Prober: lp})
	d := &fakeDriver{plan: twoServices}
	var steps []string
	res := verify.RunAction(context.Background(), l, alice, db, verify.Options{Spec: "testdata/spec.yaml", Expect: "N2",
		Progress: func(s verify.Step) {
			if s.Status == "" {
				steps = append(steps, s.Name)
			}
		}}, verify.Deps{Driver: d, Prober: verify.LayerProber(l, execBackend{}, alice)})
	if res.Exit != verify.ExitWeaker || !strings.Contains(res.Reason, "N is N0") {
		t.Fatalf("result %d %s", res.Exit, res.Reason)
	}
	if strings.Join(steps, " ") != "lint load up wait arm probe evidence teardown" {
		t.Errorf("progress %v", steps)
	}
	// The agent reached the outside canary, so the contact was repeated (confirmEgress).
	if len(lp.seen) != 2 || lp.seen[0] != res.SandboxID+"/default" || lp.seen[1] != lp.seen[0] {
		t.Errorf("layer probed %v; want the staged %s twice", lp.seen, res.SandboxID)
	}
	if err := l.Check(action.Request{Action: backends.ActionProbe, SandboxID: res.SandboxID}); err == nil {
		t.Errorf("the sandbox is still staged after the run")
	}
	es, err := db.Journal(state.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if e.Operator != "alice" {
			t.Errorf("journaled by %q: %+v", e.Operator, e)
		}
		got = append(got, e.Action+" "+string(e.Phase)+" "+e.Outcome)
	}
	if strings.Join(got, ", ") != "verify intent , probe intent , probe outcome ok, probe intent , probe outcome ok, verify outcome ok" {
		t.Fatalf("journal %v", got)
	}
	first, last := es[0], es[len(es)-1]
	if first.Target != verify.HistoryKey("testdata/spec.yaml") || first.Params["run"] != res.RunID || first.Params["expected"] != "N2" ||
		last.Params["measured"] != "T0.H1.N0" || last.Params["exit"] != "1" || last.Params["outcome"] != "weaker" {
		t.Errorf("verify entries %+v … %+v", first, last)
	}
	hist, err := verify.History(db, "testdata/spec.yaml", 0)
	if err != nil || len(hist) != 1 || hist[0].RunID != res.RunID || hist[0].Measured != res.Measured || len(hist[0].Checks) != len(res.Checks) {
		t.Fatalf("history %+v, %v", hist, err)
	}

	ro := action.New(noFleet{}, db, action.Options{ReadOnly: true, Prober: lp})
	d2 := &fakeDriver{plan: twoServices}
	res = verify.RunAction(context.Background(), ro, alice, db, verify.Options{Spec: "testdata/spec.yaml"},
		verify.Deps{Driver: d2, Prober: verify.LayerProber(ro, execBackend{}, alice)})
	if res.Exit != verify.ExitBadInput || !strings.Contains(res.Reason, "read-only") || d2.upCalled {
		t.Errorf("read-only run: exit %d %q, stood up %v", res.Exit, res.Reason, d2.upCalled)
	}
}

type noFleet struct{}

func (noFleet) Lookup(string) (backends.Backend, backends.Sandbox, bool) {
	return nil, backends.Sandbox{}, false
}
func (noFleet) Fleet() []backends.Sandbox { return nil }

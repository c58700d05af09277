package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/state"
)

func TestRequestIdentityIsJournaledNotTheProcess(t *testing.T) {
	l, _, db := setup(t, false)
	if _, err := l.Snapshot(context.Background(), Request{SandboxID: sbID, Identity: bob}, backends.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Snapshot(context.Background(), Request{SandboxID: sbID}, backends.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	es := journal(t, db)
	if len(es) != 4 || es[0].Operator != "bob" || es[1].Operator != "bob" || es[2].Operator != local.Operator || es[3].Operator != local.Operator {
		t.Fatalf("journal operators = %+v; want bob's two entries, then the layer's default identity's", es)
	}
}

func TestAuthorizerRefusesAtTheActionLayerAndIsJournaled(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fb := &fakeBackend{}
	r := fakeResolver{b: fb, fleet: map[string]backends.Sandbox{sbID: {ID: sbID, Name: "x", Actionable: true}}}
	viewerErr := errors.New("viewers may not act")
	l := New(r, db, Options{Identity: local, Authorize: func(who Identity, a backends.Action) error {
		if who.Operator == "bob" && a.Mutating() {
			return fmt.Errorf("%s: %w", viewerErr, ErrForbidden)
		}
		return nil
	}})
	err = l.Teardown(context.Background(), Request{SandboxID: sbID, Confirmed: true, Identity: bob}, backends.TeardownOptions{})
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "viewers may not act") {
		t.Fatalf("teardown by a refused identity = %v", err)
	}
	if len(fb.calls) != 0 {
		t.Fatalf("backend called: %v", fb.calls)
	}
	if err := l.Check(Request{Action: backends.ActionSnapshot, SandboxID: sbID}); err != nil {
		t.Errorf("the default identity is refused too: %v", err)
	}
	es := journal(t, db)
	if len(es) != 2 || es[1].Outcome != state.OutcomeRefused || es[1].Operator != "bob" || !strings.Contains(es[1].Error, "viewers") {
		t.Fatalf("journal = %+v; want bob's refused teardown with the reason", es)
	}
}

func TestSnapshotsAreNamedByIDOrUniqueName(t *testing.T) {
	l, fb, db := setup(t, false)
	t0 := time.Unix(1000, 0)
	fb.snaps = []backends.SnapshotInfo{
		{ID: "a1", SandboxID: sbID, Name: "s1", Created: t0},
		{ID: "b2", SandboxID: sbID, Name: "dup", Created: t0.Add(time.Minute)},
		{ID: "c3", SandboxID: sbID, Name: "dup", Created: t0.Add(2 * time.Minute)},
	}
	ctx := context.Background()
	req := Request{SandboxID: sbID, Confirmed: true}
	for _, tc := range []struct {
		ref, want, err string
		is             error
	}{
		{ref: "s1", want: "a1"}, // the name shown everywhere is accepted
		{ref: "b2", want: "b2"}, // and the ID
		{ref: "", want: "c3"},   // newest by default
		{ref: "dup", err: "use an ID: b2 (", is: ErrAmbiguous},
		{ref: "nope", err: `inspect-x-iabcdef has no snapshot with ID or name "nope"`, is: backends.ErrSnapshotNotFound},
	} {
		snap, err := l.Revert(ctx, req, tc.ref, backends.RevertOptions{})
		if tc.err != "" {
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.err) || errors.Is(err, backends.ErrNotFound) {
				t.Errorf("revert to %q = %v; want %q (and not 'sandbox not found')", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || snap.ID != tc.want {
			t.Errorf("revert to %q picked %q, %v; want %s", tc.ref, snap.ID, err, tc.want)
		}
	}
	if _, err := l.DeleteSnapshot(ctx, req, "s1"); err != nil {
		t.Fatal(err)
	}
	want := []string{"revert " + sbID + "@a1", "revert " + sbID + "@b2", "revert " + sbID + "@c3", "delete " + sbID + "@a1"}
	if fmt.Sprint(fb.calls) != fmt.Sprint(want) {
		t.Errorf("backend calls = %v; want %v", fb.calls, want)
	}
	es := journal(t, db)
	last := es[len(es)-2]
	if last.Action != string(backends.ActionDeleteSnapshot) || last.Params["snapshot"] != "a1" || last.Params["name"] != "s1" {
		t.Errorf("deletion intent = %+v; want its own action with the resolved ID and the name", last)
	}
}

func TestOneSandboxResolver(t *testing.T) {
	eks := "k8s:arn:aws:eks:eu-west-2:123:cluster/prod"
	fleet := []backends.Sandbox{
		{ID: "docker:default/inspect-web-iabc123", Name: "inspect-web-iabc123"},
		{ID: eks + "/evals/agent-env-x1", Name: "agent-env-x1"},
		{ID: eks + "/other/agent-env-x1", Name: "agent-env-x1"},
		{ID: "docker:lab/inspect-web-iabc123", Name: "inspect-web-iabc123"},
		{ID: "pve:range1/inspect-sample-ab12", Name: "inspect-sample-ab12"},
	}
	for _, tc := range []struct{ arg, want, err string }{
		{arg: eks + "/evals/agent-env-x1", want: eks + "/evals/agent-env-x1"},
		{arg: "evals/agent-env-x1", want: eks + "/evals/agent-env-x1"},
		{arg: "inspect-sample-ab12", want: "pve:range1/inspect-sample-ab12"},
		{arg: "agent-env-x1", err: "is ambiguous; use one of: " + eks + "/evals/agent-env-x1, " + eks + "/other/agent-env-x1"},
		{arg: "inspect-web-iabc123", err: "docker:default/inspect-web-iabc123, docker:lab/inspect-web-iabc123"},
		{arg: "lab/inspect-web-iabc123", want: "docker:lab/inspect-web-iabc123"},
		{arg: "nothing", err: `sandbox not found: no sandbox named "nothing"`},
		{arg: "docker:default/gone", err: `sandbox not found: no sandbox with ID "docker:default/gone"`},
	} {
		sb, err := ResolveSandbox(fleet, tc.arg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ResolveSandbox(%q) = %s, %v; want error %q", tc.arg, sb.ID, err, tc.err)
			}
			continue
		}
		if err != nil || sb.ID != tc.want {
			t.Errorf("ResolveSandbox(%q) = %q, %v; want %q", tc.arg, sb.ID, err, tc.want)
		}
	}
}

type fakeProber struct{ probed []string }

func (p *fakeProber) Probe(_ context.Context, b backends.Backend, sb backends.Sandbox, req probe.Request) (probe.Report, error) {
	p.probed = append(p.probed, sb.ID+"/"+req.Member)
	return probe.Report{SandboxID: sb.ID, Member: req.Member, Result: probe.Result{Facts: &facts.Report{}}}, nil
}

func TestProbeIsAnActionLikeAnyOther(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := fakeResolver{b: &fakeBackend{}, fleet: map[string]backends.Sandbox{sbID: {ID: sbID, Name: "x", Actionable: true}}}
	unwired := New(r, db, Options{Identity: local, NoProbe: "probe binary not found"})
	if err := unwired.Check(Request{Action: backends.ActionProbe, SandboxID: sbID}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "probe binary not found") {
		t.Fatalf("probe without a prober = %v; want the reason", err)
	}
	p := &fakeProber{}
	l := New(r, db, Options{Identity: local, Prober: p})
	rep, err := l.Probe(context.Background(), Request{SandboxID: sbID}, probe.Request{Member: "default"})
	if err != nil || !rep.Probed() || fmt.Sprint(p.probed) != "["+sbID+"/default]" {
		t.Fatalf("probe = %+v, %v; probed %v", rep, err, p.probed)
	}
	es := journal(t, db)
	if len(es) != 2 || es[0].Action != "probe" || es[0].Params["member"] != "default" || es[1].Outcome != state.OutcomeOK {
		t.Fatalf("journal = %+v; want the probe's intent and ok outcome", es)
	}
}

package action

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
)

const specKey = "verify:/evals/ctf/compose.yaml"

// TestVerifyIsATaskWithStepsAndItsProbeGoesThroughTheLayer: a verify run is a task whose step
// follows the run's progress, holds the spec's lock, probes the sandbox it staged (absent from
// the fleet) through the layer, and journals intent, the probe and the outcome with its params,
// all by the identity that asked.
func TestVerifyIsATaskWithStepsAndItsProbeGoesThroughTheLayer(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := &fakeProber{}
	fb := &fakeBackend{}
	l := New(fakeResolver{b: fb, fleet: map[string]backends.Sandbox{}}, db, Options{Identity: local, Prober: p})
	staged := "docker:default/rkv-compose-0a1b2c3d"
	err = l.Verify(context.Background(), Request{SandboxID: specKey, Identity: bob, Params: map[string]string{"run": "0a1b2c3d"}},
		func(ctx context.Context) (map[string]string, error) {
			backends.Progress(ctx, "up")
			ts := l.Tasks()
			if len(ts) != 1 || ts[0].Action != backends.ActionVerify || ts[0].Step != "up" || ts[0].Status != TaskRunning || ts[0].By != bob {
				t.Errorf("running task = %+v; want bob's verify at step up", ts)
			}
			if a, busy := l.Busy(specKey); !busy || a != backends.ActionVerify {
				t.Errorf("the spec is not locked while it is verified")
			}
			if err := l.Verify(ctx, Request{SandboxID: specKey, Identity: bob}, func(context.Context) (map[string]string, error) {
				t.Error("a second verify of the same spec ran")
				return nil, nil
			}); !errors.Is(err, ErrBusy) {
				t.Errorf("second verify = %v; want busy", err)
			}
			if _, err := l.Probe(ctx, Request{SandboxID: staged, Identity: bob}, probe.Request{Member: "default"}); !errors.Is(err, backends.ErrNotFound) {
				t.Errorf("probe before staging = %v; want not found", err)
			}
			unstage := l.Stage(fb, backends.Sandbox{ID: staged, Name: "rkv-compose-0a1b2c3d", Actionable: true})
			if _, err := l.Probe(ctx, Request{SandboxID: staged, Identity: bob}, probe.Request{Member: "default"}); err != nil {
				t.Errorf("probe of the staged sandbox: %v", err)
			}
			unstage()
			if err := l.Check(Request{Action: backends.ActionProbe, SandboxID: staged}); !errors.Is(err, backends.ErrNotFound) {
				t.Errorf("after unstage: %v; want not found", err)
			}
			return map[string]string{"measured": "T0.H1.N2", "exit": "0"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.probed) != 1 || p.probed[0] != staged+"/default" {
		t.Errorf("probed %v", p.probed)
	}
	ts := l.Tasks() // newest first: the probe, then the verify
	if len(ts) != 2 || ts[1].Status != TaskStatus(state.OutcomeOK) || ts[1].Action != backends.ActionVerify || ts[0].Action != backends.ActionProbe {
		t.Errorf("finished tasks %+v", ts)
	}
	var verifyEntries, probeEntries []state.Entry
	for _, e := range journal(t, db) {
		if got := (Identity{Operator: e.Operator, Transport: e.Transport, Fingerprint: e.Fingerprint, Source: e.Source}); got != bob {
			t.Errorf("entry by %+v, want bob's whole identity (name, transport, key, source): %+v", got, e)
		}
		switch e.Action {
		case "verify":
			verifyEntries = append(verifyEntries, e)
		case "probe":
			probeEntries = append(probeEntries, e)
		}
	}
	// The refused second run and the probe before staging are journaled too.
	if len(verifyEntries) != 4 || len(probeEntries) != 4 {
		t.Fatalf("verify entries %+v\nprobe entries %+v", verifyEntries, probeEntries)
	}
	first, last := verifyEntries[0], verifyEntries[len(verifyEntries)-1]
	if first.Phase != state.PhaseIntent || first.Params["run"] != "0a1b2c3d" || last.Intent != first.Seq ||
		last.Outcome != state.OutcomeOK || last.Params["measured"] != "T0.H1.N2" {
		t.Errorf("run journaled as %+v … %+v", first, last)
	}
	if probeEntries[3].Outcome != state.OutcomeOK || probeEntries[3].Target != staged {
		t.Errorf("probe outcome %+v", probeEntries[3])
	}
}

// TestVerifyRefusedReadOnly: verify creates containers, so read-only mode refuses it before it
// runs, and the refusal is journaled.
func TestVerifyRefusedReadOnly(t *testing.T) {
	l, _, db := setup(t, true)
	err := l.Verify(context.Background(), Request{SandboxID: specKey}, func(context.Context) (map[string]string, error) {
		t.Error("verify ran in read-only mode")
		return nil, nil
	})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only verify = %v", err)
	}
	es := journal(t, db)
	if len(es) != 2 || es[1].Outcome != state.OutcomeRefused || es[1].Action != "verify" {
		t.Fatalf("journal %+v", es)
	}
}

// TestVerifyCancelledAndFailed: a run cancelled through the layer is journaled cancelled, one that
// could not verify failed, with its reason.
func TestVerifyCancelledAndFailed(t *testing.T) {
	l, _, db := setup(t, false)
	err := l.Verify(context.Background(), Request{SandboxID: specKey}, func(ctx context.Context) (map[string]string, error) {
		if ok, err := l.Cancel(Identity{}, specKey); !ok || err != nil {
			t.Error("Cancel found no verify running")
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled verify = %v", err)
	}
	_ = l.Verify(context.Background(), Request{SandboxID: specKey}, func(context.Context) (map[string]string, error) {
		return map[string]string{"exit": "3"}, errors.New("up: image busybox:nope not present")
	})
	es := journal(t, db)
	// The cancellation is journaled (who cancelled what) before the run's cancelled outcome.
	if len(es) != 5 || es[1].Action != ActionCancel || es[1].Params["action"] != "verify" || es[2].Outcome != state.OutcomeCancelled ||
		es[4].Outcome != state.OutcomeFailed || es[4].Error != "up: image busybox:nope not present" || es[4].Params["exit"] != "3" {
		t.Fatalf("journal %+v", es)
	}
}

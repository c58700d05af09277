package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
)

// TestAuthorVerifyInTheWorkbench: V on the author verifies the spec being written through the
// session's runner, as a task of the action layer whose step follows the run (the task panel
// shows it); the author shows the steps, and the result opens in the probe report view. The
// runner stands for the Docker one (the cli package wires verify.RunAction there).
func TestAuthorVerifyInTheWorkbench(t *testing.T) {
	t.Chdir(t.TempDir()) // the new draft's snapshot is written beside compose.yaml
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{w: 120, h: 40, verify: func(layer *action.Layer, _ *state.DB) func(context.Context, verify.Options) verify.Result {
		return func(ctx context.Context, o verify.Options) verify.Result {
			res := verify.Result{Spec: o.As, RunID: "0a1b2c3d", Exit: verify.ExitWeaker, Outcome: "weaker", Reason: "N is N0, expected N2",
				Expected: verify.Profile{T: "T0", H: "H1", N: "N2"}, Measured: verify.Profile{T: "T0", H: "H1", N: "N0"}, ExpectedSource: "spec"}
			err := layer.Verify(ctx, action.Request{SandboxID: verify.HistoryKey(o.As)}, func(ctx context.Context) (map[string]string, error) {
				for _, step := range []string{"lint", "up"} {
					o.Progress(verify.Step{Name: step})
					backends.Progress(ctx, "%s", step)
					if step == "up" {
						<-gate
					}
					s := verify.Step{Name: step, Status: "ok", DurationMS: 1200}
					res.Steps = append(res.Steps, s)
					o.Progress(s)
				}
				return map[string]string{"exit": "1"}, nil
			})
			if err != nil {
				t.Errorf("verify through the layer: %v", err)
			}
			return res
		}
	}})
	h.key("a")
	h.waitText("rangekeeper author")
	h.waitText("V verify")
	h.key("V")
	h.waitText("verify: lint ✓ 1.2s · up …")
	var running action.Task
	for _, tk := range h.layer.Tasks() {
		if tk.Action == backends.ActionVerify {
			running = tk
		}
	}
	if running.Status != action.TaskRunning || running.Step != "up" || !strings.HasPrefix(running.Target, "verify:") {
		t.Fatalf("verify task %+v; want running at step up on the spec", running)
	}
	h.key("t")
	h.waitText("1 verify    running") // its step is at the end of a row the temp path may cut; checked above
	h.key("esc")
	h.waitText("rangekeeper author")
	close(gate)
	f := h.waitText("Verify  compose.yaml")
	for _, want := range []string{"WEAKER", "expected T0.H1.N2 (spec)", "measured T0.H1.N0", "steps: lint 1.2s · up 1.2s", "not probed: N is N0, expected N2"} {
		if !strings.Contains(f, want) {
			t.Errorf("report lacks %q:\n%s", want, f)
		}
	}
	es := outcomes(t, h.db, "verify", verify.HistoryKey("compose.yaml"))
	if len(es) != 1 || es[0].Outcome != state.OutcomeOK || es[0].Operator != "op@test" || es[0].Params["exit"] != "1" {
		t.Errorf("journal %+v", es)
	}
}

// TestAuthorVerifyCancelledFromTheTaskPanel: the cancel key on the verify task in the task panel
// cancels the run through the layer (the real runner then tears down); the journal says
// cancelled and the report says the run could not verify.
func TestAuthorVerifyCancelledFromTheTaskPanel(t *testing.T) {
	t.Chdir(t.TempDir())
	h := newHarness(t, harnessOpts{w: 120, h: 40, verify: func(layer *action.Layer, _ *state.DB) func(context.Context, verify.Options) verify.Result {
		return func(ctx context.Context, o verify.Options) verify.Result {
			res := verify.Result{Spec: o.As, Exit: verify.ExitCouldNotRun, Outcome: "could not verify", Reason: "interrupted during up"}
			_ = layer.Verify(ctx, action.Request{SandboxID: verify.HistoryKey(o.As)}, func(ctx context.Context) (map[string]string, error) {
				o.Progress(verify.Step{Name: "up"})
				backends.Progress(ctx, "up")
				<-ctx.Done()
				return map[string]string{"exit": "3"}, ctx.Err()
			})
			return res
		}
	}})
	h.key("a")
	h.waitText("V verify")
	h.key("V")
	h.waitText("verify: up …")
	h.key("t")
	h.waitFor("the running verify task", func(f string) bool { return strings.Contains(f, "1 verify    running") })
	h.key("x")
	f := h.waitText("Verify  compose.yaml")
	if !strings.Contains(f, "COULD NOT VERIFY") || !strings.Contains(f, "interrupted during up") {
		t.Errorf("report:\n%s", f)
	}
	es := outcomes(t, h.db, "verify", verify.HistoryKey("compose.yaml"))
	if len(es) != 1 || es[0].Outcome != state.OutcomeCancelled {
		t.Errorf("journal %+v; want the verify cancelled", es)
	}
}

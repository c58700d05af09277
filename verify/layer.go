package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
)

// LayerProber runs verify's probes through the action layer, the one road to any probe: the
// sandbox the run stood up is staged on the layer (the fleet does not list it yet), and each
// probe is then an action like any other — locked, refused in read-only mode, journaled with
// who asked — whose report also lands in that sandbox's probe history. l's prober must be a
// probe.Pipeline (or honour probe.Request.Targets): verify points the probe at its canaries.
func LayerProber(l *action.Layer, b backends.Backend, who action.Identity) Prober {
	return ProberFunc(func(ctx context.Context, req ProbeRequest) (probe.Result, error) {
		unstage := l.Stage(b, backends.Sandbox{ID: req.SandboxID, Name: backends.ShortName(req.SandboxID), Backend: b.Kind(), Actionable: true})
		defer unstage()
		targets := req.Targets
		rep, err := l.Probe(ctx, action.Request{SandboxID: req.SandboxID, Identity: who},
			probe.Request{Member: req.Member, Targets: &targets})
		if err != nil && rep.Result.CouldNotProbe != "" && ctx.Err() == nil {
			return rep.Result, nil // the result says why; verify reports it as could not verify
		}
		return rep.Result, err
	})
}

// RunAction is Run as an action of the layer (action.Layer.Verify): the intent is journaled with
// the run, project and expectation, the outcome with the measured profile and exit status, both
// by who asked; read-only mode and Authorize refuse it (a bad-input result saying so); it is a
// task whose step is the run's current one; and the finished result is kept in history under
// HistoryKey of the spec. d.Recorder is not used (the layer journals).
func RunAction(ctx context.Context, l *action.Layer, who action.Identity, history probe.HistoryStore, o Options, d Deps) Result {
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	d.Recorder = nil
	var res Result
	ran := false
	req := action.Request{SandboxID: HistoryKey(o.name()), Identity: who,
		Params: map[string]string{"run": o.RunID, "spec": o.name(), "expected": o.Expect}}
	err := l.Verify(ctx, req, func(ctx context.Context) (map[string]string, error) {
		ran = true
		progress := o.Progress
		o.Progress = func(s Step) {
			if s.Status == "" {
				backends.Progress(ctx, "%s", s.Name)
			}
			if progress != nil {
				progress(s)
			}
		}
		res = Run(ctx, o, d)
		var herr error
		if history != nil {
			if rec, err := res.Record(); err != nil {
				herr = err
			} else if err := history.PutProbe(rec); err != nil {
				herr = err
			}
			if herr != nil {
				res.Notes = append(res.Notes, "could not record the result: "+herr.Error())
			}
		}
		var runErr error
		if res.Exit == ExitBadInput || res.Exit == ExitCouldNotRun {
			runErr = errors.New(res.Reason)
		}
		return outcomeParams(res), runErr
	})
	if !ran {
		res = Result{Version: 1, RunID: o.RunID, Spec: o.name(), FailOn: o.FailOn, Axes: []AxisResult{}, Checks: []Check{},
			Findings: []Finding{}, Probes: []MemberProbe{}, Steps: []Step{}, badInput: fmt.Sprint(err)}
		res.conclude()
	}
	return res
}

// startParams and outcomeParams are what the journal keeps of a run.
func startParams(r Result) map[string]string {
	return map[string]string{"run": r.RunID, "project": r.Project, "sandbox": r.SandboxID, "backend": r.Backend,
		"expected": r.Expected.String()}
}

func outcomeParams(r Result) map[string]string {
	p := startParams(r)
	p["measured"], p["outcome"], p["exit"] = r.Measured.String(), r.Outcome, fmt.Sprint(r.Exit)
	if r.Teardown.Kept {
		p["kept"] = "true"
	}
	return p
}

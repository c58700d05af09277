package probe

import (
	"context"
	"errors"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/state"
)

// HistoryStore keeps probe results; *state.DB is one.
type HistoryStore interface {
	PutProbe(state.ProbeRecord) error
}

// Pipeline is the whole escape probe of one sandbox: deliver and run the binary (RunWith), merge
// its facts with the live posture and the host's versions (Assess), keep the report (Save). The
// action layer runs it (action.Layer.Probe), so every probe is locked, journaled and refused in
// read-only mode like any other action; nothing else calls it.
type Pipeline struct {
	Binary  []byte        // the static rangekeeper-probe
	Targets facts.Targets // the only addresses it may contact; none are built in
	History HistoryStore  // nil: reports are not kept
	Timeout time.Duration // per sandbox; 0: 2 minutes
}

// Request tunes one probe.
type Request struct {
	Member   string           // "" : Inspect's default member
	Versions verdict.Versions // versions the operator gave; the backend fills the rest when it can
	Timeout  time.Duration    // overrides Pipeline.Timeout when set
	// Targets, when set, replace the pipeline's for this probe: verify points the probe at
	// canaries it owns (and adds the configured targets itself).
	Targets *facts.Targets
}

// Probe runs the pipeline on sb through b's exec and copy capabilities. A sandbox that could not
// be probed gives its report (saved, so history shows the attempt) and an error saying why.
func (p *Pipeline) Probe(ctx context.Context, b backends.Backend, sb backends.Sandbox, req Request) (Report, error) {
	timeout := req.Timeout
	if timeout == 0 {
		timeout = p.Timeout
	}
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex, _ := b.(backends.Executor)
	cp, _ := b.(backends.Copier)
	targets := p.Targets
	if req.Targets != nil {
		targets = *req.Targets
	}
	res, err := RunWith(ctx, ex, cp, sb.ID, req.Member, p.Binary, targets, Options{})
	if err != nil {
		return Report{SandboxID: sb.ID, Member: req.Member, Result: res}, err
	}
	rep := Assess(res, sb.Findings, nil, HostVersions(ctx, b, req.Versions))
	if p.History != nil {
		if err := Save(p.History, rep); err != nil {
			return rep, err
		}
	}
	if !rep.Probed() {
		return rep, errors.New(res.CouldNotProbe)
	}
	return rep, nil
}

// HostVersions fills the versions the sandbox cannot see from the backend where it can tell
// (backends.HostVersioner, e.g. Docker's runc component); versions given win.
func HostVersions(ctx context.Context, b backends.Backend, given verdict.Versions) verdict.Versions {
	hv, ok := b.(backends.HostVersioner)
	if !ok || given.Runc != "" && given.Engine != "" {
		return given
	}
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := hv.HostVersions(vctx)
	if err != nil {
		return given
	}
	if given.Engine == "" {
		given.Engine = v.Engine
	}
	if given.Runc == "" {
		given.Runc = v.Runc
	}
	return given
}

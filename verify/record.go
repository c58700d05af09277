package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// ActionVerify is the journal's action name for a verify run.
const ActionVerify = string(backends.ActionVerify)

// HistoryKey is the probe-history key of a spec's verify runs ("verify:<absolute path>"); it can
// never collide with a sandbox ID, and the author screen can look a spec's runs up by it.
func HistoryKey(specPath string) string {
	if abs, err := filepath.Abs(specPath); err == nil {
		specPath = abs
	}
	return "verify:" + specPath
}

// Record converts a finished run into a probe-history record holding the whole result.
func (r Result) Record() (state.ProbeRecord, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return state.ProbeRecord{}, fmt.Errorf("verify %s: encode result: %w", r.Spec, err)
	}
	worst := ""
	if w := r.Worst(); w > catalog.SeverityNone {
		worst = w.String()
	}
	t := r.Finished
	if t.IsZero() {
		t = time.Now().UTC()
	}
	return state.ProbeRecord{SandboxID: HistoryKey(r.Spec), Time: t, Summary: r.Summary(), Worst: worst, Report: raw}, nil
}

// StateRecorder journals a run (an intent entry when it starts, an outcome entry when it
// ends) and keeps the finished result in the probe history under HistoryKey. One recorder
// serves one run.
type StateRecorder struct {
	DB  *state.DB
	Who action.Identity // who runs it: every entry carries the identity (zero: the local user, standalone)

	mu     sync.Mutex
	intent uint64
}

// Record implements Recorder.
func (s *StateRecorder) Record(_ context.Context, r Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Who.Operator == "" {
		s.Who = action.LocalIdentity()
	}
	if r.Finished.IsZero() {
		e, err := s.DB.Append(s.Who.Stamp(state.Entry{Action: ActionVerify, Target: HistoryKey(r.Spec), Params: startParams(r), Phase: state.PhaseIntent}))
		s.intent = e.Seq
		return err
	}
	params := outcomeParams(r)
	outcome := state.OutcomeOK
	switch {
	case r.Exit == ExitCouldNotRun && strings.Contains(r.Reason, "interrupted"):
		outcome = state.OutcomeCancelled
	case r.Exit == ExitCouldNotRun || r.Exit == ExitBadInput:
		outcome = state.OutcomeFailed
	}
	if _, err := s.DB.Append(s.Who.Stamp(state.Entry{Action: ActionVerify, Target: HistoryKey(r.Spec), Params: params, Phase: state.PhaseOutcome,
		Intent: s.intent, Outcome: outcome, Error: r.Reason})); err != nil {
		return err
	}
	rec, err := r.Record()
	if err != nil {
		return err
	}
	return s.DB.PutProbe(rec)
}

// History returns a spec's stored verify results, oldest first (limit 0: all).
func History(db *state.DB, specPath string, limit int) ([]Result, error) {
	recs, err := db.Probes(HistoryKey(specPath), limit)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(recs))
	for _, rec := range recs {
		var r Result
		if err := json.Unmarshal(rec.Report, &r); err != nil {
			return nil, fmt.Errorf("verify history %s at %s: %w", specPath, rec.Time.Format(time.RFC3339), err)
		}
		out = append(out, r)
	}
	return out, nil
}

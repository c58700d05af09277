package probe

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// Report is the merged, secret-free document shown to operators and stored in history: the
// probe result of one member plus the verdict per escape class.
type Report struct {
	SandboxID string           `json:"sandbox"`
	Member    string           `json:"member,omitempty"`
	Time      time.Time        `json:"time"`
	Result    Result           `json:"result"`
	Verdicts  verdict.Verdicts `json:"verdicts"`
	Versions  verdict.Versions `json:"versions,omitempty"`
}

// Assess merges a probe result with live posture, spec lint findings and host versions.
func Assess(res Result, live []backends.Finding, lint []verdict.LintFinding, versions verdict.Versions) Report {
	return Report{
		SandboxID: res.SandboxID, Member: res.Member, Time: res.Time, Result: res, Versions: versions,
		Verdicts: verdict.Evaluate(verdict.Input{Facts: res.Facts, Live: live, Lint: lint, Versions: versions}),
	}
}

// Probed reports whether the probe ran (as opposed to "could not probe").
func (r Report) Probed() bool { return r.Result.Facts != nil }

// Worst is the most severe exposed class.
func (r Report) Worst() catalog.Severity { return r.Verdicts.Worst }

// Summary is one line for lists and the journal.
func (r Report) Summary() string {
	if !r.Probed() {
		return r.Result.CouldNotProbe
	}
	var exposed []string
	for _, v := range r.Verdicts.Classes {
		if v.Status == verdict.Exposed && v.Severity >= catalog.SeverityHigh {
			exposed = append(exposed, v.Class)
		}
	}
	s := fmt.Sprintf("%d classes exposed, worst %s", r.Verdicts.Exposed, r.Verdicts.Worst)
	if len(exposed) > 0 {
		s += ": " + strings.Join(exposed, " ")
	}
	return s
}

// Critical reports whether any class is exposed at CRITICAL (the CLI's exit-1 condition).
func (r Report) Critical() bool { return r.Verdicts.Worst >= catalog.SeverityCritical }

// Record converts the report into a state record for history.
func (r Report) Record() (state.ProbeRecord, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return state.ProbeRecord{}, fmt.Errorf("probe %s: encode report: %w", r.SandboxID, err)
	}
	worst := ""
	if r.Verdicts.Worst > catalog.SeverityNone {
		worst = r.Verdicts.Worst.String()
	}
	return state.ProbeRecord{SandboxID: r.SandboxID, Time: r.Time, Summary: r.Summary(), Worst: worst, Report: raw}, nil
}

// Save appends the report to the sandbox's probe history.
func Save(db HistoryStore, r Report) error {
	rec, err := r.Record()
	if err != nil {
		return err
	}
	return db.PutProbe(rec)
}

// History returns a sandbox's stored reports oldest first (limit 0: all).
func History(db *state.DB, sandboxID string, limit int) ([]Report, error) {
	recs, err := db.Probes(sandboxID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Report, 0, len(recs))
	for _, rec := range recs {
		var r Report
		if err := json.Unmarshal(rec.Report, &r); err != nil {
			return nil, fmt.Errorf("probe history %s at %s: %w", sandboxID, rec.Time.Format(time.RFC3339), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Change is one class whose verdict differs between two runs.
type Change struct {
	Class       string           `json:"class"`
	Name        string           `json:"name"`
	From        verdict.Status   `json:"from"`
	To          verdict.Status   `json:"to"`
	FromSev     catalog.Severity `json:"from_severity"`
	ToSev       catalog.Severity `json:"to_severity"`
	Regression  bool             `json:"regression"` // got worse
	Description string           `json:"description"`
}

// Diff lists the classes whose status or severity changed from old to new.
func Diff(old, new Report) []Change {
	prev := map[string]verdict.Verdict{}
	for _, v := range old.Verdicts.Classes {
		prev[v.Class] = v
	}
	var out []Change
	for _, v := range new.Verdicts.Classes {
		p, ok := prev[v.Class]
		if !ok {
			p = verdict.Verdict{Status: verdict.Unknown}
		}
		if p.Status == v.Status && p.Severity == v.Severity {
			continue
		}
		c := Change{Class: v.Class, Name: v.Name, From: p.Status, To: v.Status, FromSev: p.Severity, ToSev: v.Severity,
			Regression: v.Severity > p.Severity}
		c.Description = fmt.Sprintf("%s %s: %s → %s", v.Class, v.Name, label(p), label(v))
		out = append(out, c)
	}
	return out
}

func label(v verdict.Verdict) string {
	if v.Status == verdict.Exposed {
		return fmt.Sprintf("exposed (%s)", v.Severity)
	}
	return string(v.Status)
}

// Latest returns a sandbox's newest stored report (ok false when never probed) and the changes
// since the run before it, for a detail view's "last probed" line.
func Latest(db *state.DB, sandboxID string) (last Report, changes []Change, ok bool, err error) {
	hist, err := History(db, sandboxID, 2)
	if err != nil || len(hist) == 0 {
		return Report{}, nil, false, err
	}
	last = hist[len(hist)-1]
	if len(hist) == 2 {
		changes = Diff(hist[0], last)
	}
	return last, changes, true, nil
}

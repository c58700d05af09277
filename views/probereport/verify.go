package probereport

import (
	"fmt"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/verify"
)

// ForVerify shows a verify run: its outcome, expected and measured profile, the weaker axes and
// the checks that were reached above the agent's escape-probe verdicts (a run that stopped
// before the probe shows why instead).
func ForVerify(res verify.Result) *Model {
	rep := probe.Report{SandboxID: res.SandboxID, Time: res.Finished}
	if len(res.Probes) > 0 {
		rep = res.Probes[0].Report // the agent's, first
	} else {
		why := res.Reason
		if why == "" {
			why = "no member was probed"
		}
		rep.Result.CouldNotProbe = "not probed: " + why
	}
	if rep.SandboxID == "" {
		rep.SandboxID = res.Spec
	}
	m := New(rep)
	m.verify = &res
	return m
}

// Verify is the verify run shown, if any.
func (m Model) Verify() (verify.Result, bool) {
	if m.verify == nil {
		return verify.Result{}, false
	}
	return *m.verify, true
}

// verifyLines head the report of a verify run.
func (m Model) verifyLines() []string {
	r := m.verify
	if r == nil {
		return nil
	}
	th := m.Theme
	outcome := strings.ToUpper(r.Outcome)
	if r.Holds() {
		outcome = th.OK.Render(outcome)
	} else {
		outcome = th.Err.Render(outcome)
	}
	lines := []string{fmt.Sprintf("%s  %s · %s · expected %s (%s) · measured %s", th.Title.Render("Verify"), r.Spec, outcome,
		r.Expected, r.ExpectedSource, r.Measured)}
	if r.Reason != "" {
		lines = append(lines, "  "+r.Reason)
	}
	for _, a := range r.Axes {
		if a.Weaker {
			lines = append(lines, th.Err.Render(fmt.Sprintf("  %s weaker: expected %s, measured %s", a.Axis, a.Expected, a.Measured)))
		}
	}
	for _, c := range r.Checks {
		if c.Status == verify.Reached {
			ev := ""
			if len(c.Evidence) > 0 {
				ev = " · " + c.Evidence[0]
			}
			lines = append(lines, th.Severity(c.Severity).Render(fmt.Sprintf("  %s %s reached %s%s", c.ID, c.Member, c.What, ev)))
		}
	}
	var steps []string
	for _, s := range r.Steps {
		mark := ""
		if s.Status == "failed" {
			mark = " ✗"
		}
		steps = append(steps, fmt.Sprintf("%s %s%s", s.Name, (time.Duration(s.DurationMS)*time.Millisecond).Round(10*time.Millisecond), mark))
	}
	if len(steps) > 0 {
		lines = append(lines, th.Dim.Render("  steps: "+strings.Join(steps, " · ")))
	}
	return lines
}

// Package render writes verify results for people (text), scripts (JSON) and CI systems (SARIF
// for code scanning, JUnit XML for test reports).
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify"
)

// TextOptions tune the text output.
type TextOptions struct {
	Color   bool // ANSI colour; callers enable it only on a terminal without NO_COLOR
	Verbose bool // evidence for every check, not only the reached ones
}

var outcomeColor = map[int]string{verify.ExitHolds: "\x1b[1;32m", verify.ExitWeaker: "\x1b[1;31m", verify.ExitBadInput: "\x1b[1;33m", verify.ExitCouldNotRun: "\x1b[1;33m"}

// Text writes a run for a terminal or a CI log.
func Text(w io.Writer, r verify.Result, o TextOptions) error {
	paint := func(code, s string) string {
		if !o.Color || code == "" {
			return s
		}
		return code + s + "\x1b[0m"
	}
	p := &printer{w: w}
	p.f("%s  run %s", paint("\x1b[1m", "verify "+r.Spec), r.RunID)
	if r.SandboxID != "" {
		p.f("  %s", r.SandboxID)
	}
	p.f("\n")
	if r.Exit == verify.ExitBadInput {
		p.f("  %s: %s\n", paint(outcomeColor[r.Exit], strings.ToUpper(r.Outcome)), r.Reason)
		return p.err
	}
	src := r.ExpectedSource
	if src != "" {
		src = " (" + src + ")"
	}
	p.f("  %s   expected %s%s   measured %s", paint(outcomeColor[r.Exit], strings.ToUpper(r.Outcome)), r.Expected, src, r.Measured)
	if r.Declared != "" {
		p.f("   lint profile %s", r.Declared)
	}
	p.f("\n")
	if len(r.Axes) > 0 {
		p.f("\n  axis  expected  measured\n")
		for _, a := range r.Axes {
			mark := ""
			if a.Weaker {
				mark = paint("\x1b[31m", "  WEAKER")
			}
			p.f("  %-4s  %-8s  %-8s%s  %s\n", a.Axis, dash(a.Expected), dash(a.Measured), mark, strings.Join(a.Why, "; "))
		}
	}
	if len(r.Checks) > 0 {
		p.f("\n  checks\n")
		for _, c := range r.Checks {
			sev := ""
			if c.Status == verify.Reached {
				sev = " [" + strings.ToUpper(c.Severity.String()) + "]"
			}
			status := fmt.Sprintf("%-11s", c.Status)
			if c.Status == verify.Reached {
				status = paint("\x1b[31m", status)
			}
			p.f("    %s %-16s %-10s %s%s\n", status, c.ID, c.Member, c.What, sev)
			if c.Status == verify.Reached || o.Verbose || c.Status == verify.NotTested {
				for _, e := range c.Evidence {
					p.f("                  %s\n", e)
				}
			}
		}
	}
	findings := append([]verify.Finding(nil), r.Findings...)
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].Severity > findings[j].Severity })
	shown, info := 0, 0
	for _, f := range findings {
		if f.Severity < catalog.SeverityLow {
			info++
			continue
		}
		if shown == 0 {
			p.f("\n  findings (fail on %s)\n", r.FailOn)
		}
		shown++
		where := f.Member
		if f.File != "" {
			where = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		sev := fmt.Sprintf("%-8s", strings.ToUpper(f.Severity.String()))
		if f.Severity >= r.FailOn {
			sev = paint("\x1b[31m", sev)
		}
		p.f("    %s %-14s %-6s %-22s %s\n", sev, f.RuleID, f.Source, where, f.Message)
	}
	if info > 0 {
		p.f("    (%d info finding(s) in the JSON output)\n", info)
	}
	if len(r.Steps) > 0 {
		var parts []string
		var total int64
		for _, s := range r.Steps {
			part := s.Name + " " + ms(s.DurationMS)
			if s.Status == "failed" {
				part += " (failed)"
			}
			parts = append(parts, part)
			total += s.DurationMS
		}
		p.f("\n  steps: %s = %s\n", strings.Join(parts, " · "), ms(total))
	}
	td := r.Teardown
	switch {
	case td.Kept:
		p.f("  kept for inspection; remove with:\n    %s\n", td.Command)
	case td.Removed.Zero() && td.Remaining.Zero() && td.Error == "":
	case td.Remaining.Zero() && td.Error == "":
		p.f("  teardown: removed %s; nothing left with the run label\n", td.Removed)
	default:
		p.f("  %s: %s left with the run label (%s); remove with:\n    %s\n", paint("\x1b[31m", "teardown incomplete"), td.Remaining, td.Error, td.Command)
	}
	for _, n := range r.Notes {
		p.f("  note: %s\n", n)
	}
	if r.Reason != "" {
		p.f("  %s: %s\n", r.Outcome, r.Reason)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ms(n int64) string {
	d := time.Duration(n) * time.Millisecond
	if d < time.Second {
		return d.String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// JSON writes the result as one indented document.
func JSON(w io.Writer, r verify.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/spec/report"
	"github.com/rangekeeper/rangekeeper/verify"
)

// SARIFOptions name the tool version recorded in the log.
type SARIFOptions struct {
	Version string
}

// SARIF writes a SARIF 2.1.0 log: lint's own log for the spec (spec/report, with every lint
// rule), extended with a rule and a result for each probe and verify finding. Those results
// point at the line of the service they concern, so code scanning shows them on the spec.
func SARIF(w io.Writer, r verify.Result, o SARIFOptions) error {
	var lint []spec.Result
	if r.Lint != nil {
		lint = append(lint, *r.Lint)
	}
	var buf bytes.Buffer
	if err := report.SARIF(&buf, lint, report.SARIFOptions{Version: o.Version}); err != nil {
		return err
	}
	var log map[string]any
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		return fmt.Errorf("sarif: re-read lint log: %w", err)
	}
	runs, _ := log["runs"].([]any)
	if len(runs) == 0 {
		return fmt.Errorf("sarif: lint log has no run")
	}
	run := runs[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	rules, _ := driver["rules"].([]any)
	results, _ := run["results"].([]any)
	index := map[string]int{}
	for i, rule := range rules {
		index[rule.(map[string]any)["id"].(string)] = i
	}
	lines := map[string]int{}
	for _, s := range r.Services {
		lines[s.Name] = s.Line
	}
	addRule := func(id, title, fix string, sev catalog.Severity, axis catalog.Axis) int {
		if i, ok := index[id]; ok {
			return i
		}
		rule := map[string]any{"id": id, "name": id, "shortDescription": map[string]any{"text": title},
			"fullDescription":      map[string]any{"text": title},
			"defaultConfiguration": map[string]any{"level": level(sev)},
			"properties":           map[string]any{"axis": string(axis), "severity": sev.String(), "tags": []string{"security", "sandbox", "verify"}}}
		if fix != "" {
			rule["help"] = map[string]any{"text": "Fix: " + fix}
		}
		rules = append(rules, rule)
		index[id] = len(rules) - 1
		return index[id]
	}
	for _, d := range verify.CheckDefs() {
		addRule(d.ID, d.Title, d.Fix, d.Severity, catalog.AxisNetwork)
	}
	extra := make([]verify.Finding, 0, len(r.Findings))
	for _, f := range r.Findings {
		if f.Source != "lint" {
			extra = append(extra, f)
		}
	}
	sort.SliceStable(extra, func(i, j int) bool { return extra[i].RuleID < extra[j].RuleID })
	for _, f := range extra {
		i := addRule(f.RuleID, f.Title, f.Fix, f.Severity, f.Axis)
		msg := f.Message
		if f.Member != "" {
			msg = f.Member + ": " + msg
		}
		results = append(results, map[string]any{
			"ruleId": f.RuleID, "ruleIndex": i, "level": level(f.Severity), "message": map[string]any{"text": msg},
			"locations": []any{map[string]any{"physicalLocation": map[string]any{
				"artifactLocation": map[string]any{"uri": (&url.URL{Path: filepath.ToSlash(r.Spec)}).String()},
				"region":           map[string]any{"startLine": max(lines[f.Member], 1)},
			}}},
			"properties": map[string]any{"severity": f.Severity.String(), "axis": string(f.Axis), "source": f.Source,
				"member": f.Member, "evidence": f.Evidence, "run": r.RunID},
		})
	}
	driver["rules"], run["results"] = rules, results
	run["properties"] = map[string]any{"verify": map[string]any{"run": r.RunID, "outcome": r.Outcome, "exit": r.Exit,
		"expected": r.Expected.String(), "measured": r.Measured.String(), "reason": r.Reason}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

func level(s catalog.Severity) string {
	switch {
	case s >= catalog.SeverityHigh:
		return "error"
	case s == catalog.SeverityMedium:
		return "warning"
	}
	return "note"
}

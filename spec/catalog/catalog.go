// Package catalog is the one hardening vocabulary of rangekeeper: rule IDs and their metadata
// (rules_data.go), severities, axes and the shared sets (vocab.go) that the spec linter, live
// posture (backends/*/posture.go) and the escape probe's verdicts all read.
package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// Severity orders findings; the zero value means "no finding".
type Severity int

const (
	SeverityNone Severity = iota
	SeverityInfo
	SeverityLow
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

var severityNames = [...]string{"none", "info", "low", "medium", "high", "critical"}

func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText renders the severity as its lower-case name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a lower-case or upper-case severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity accepts "critical", "HIGH", "med", etc.
func ParseSeverity(name string) (Severity, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "med" {
		n = "medium"
	}
	if n == "crit" {
		n = "critical"
	}
	for i, v := range severityNames {
		if v == n {
			return Severity(i), nil
		}
	}
	return SeverityNone, fmt.Errorf("unknown severity %q (want critical, high, medium, low or info)", name)
}

// Axis is one of the three hardening axes.
type Axis string

const (
	AxisTooling Axis = "tooling" // what the agent can invoke
	AxisHost    Axis = "host"    // can it escape
	AxisNetwork Axis = "network" // what it can reach
)

// Rule is the metadata of one rule; the logic that decides it lives with the format it reads.
type Rule struct {
	ID         string
	Title      string
	Severity   Severity
	Axis       Axis
	Message    string
	Fix        string
	References []string
}

// rules indexes builtin by ID; a duplicate ID is a programming error caught at init.
var rules = func() map[string]Rule {
	m := make(map[string]Rule, len(builtin))
	for _, r := range builtin {
		if _, dup := m[r.ID]; dup {
			panic("catalog: duplicate rule " + r.ID)
		}
		m[r.ID] = r
	}
	return m
}()

// Lookup returns the rule with id.
func Lookup(id string) (Rule, bool) {
	r, ok := rules[id]
	return r, ok
}

// MustLookup returns the rule with id and panics on an unknown ID (a typo a test catches).
func MustLookup(id string) Rule {
	r, ok := rules[id]
	if !ok {
		panic("catalog: unknown rule " + id)
	}
	return r
}

// All returns every rule sorted by ID.
func All() []Rule {
	out := make([]Rule, 0, len(rules))
	for _, r := range rules {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

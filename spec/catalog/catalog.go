// Package catalog holds the hardening vocabulary shared by the spec linter, live posture and the
// escape probe: severities, axes and the rule metadata keyed by stable rule ID.
package catalog

import (
	"fmt"
	"sort"
	"strings"
	"sync"
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

var (
	mu    sync.RWMutex
	rules = map[string]Rule{}
)

// Register adds rules to the catalogue; a duplicate ID panics at init time because it is a
// programming error that tests must catch.
func Register(rs ...Rule) {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range rs {
		if _, dup := rules[r.ID]; dup {
			panic("catalog: duplicate rule " + r.ID)
		}
		rules[r.ID] = r
	}
}

// Lookup returns the rule with id.
func Lookup(id string) (Rule, bool) {
	mu.RLock()
	defer mu.RUnlock()
	r, ok := rules[id]
	return r, ok
}

// All returns every registered rule sorted by ID.
func All() []Rule {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Rule, 0, len(rules))
	for _, r := range rules {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

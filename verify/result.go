package verify

import (
	"fmt"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Exit statuses of `rangekeeper verify`.
const (
	ExitHolds       = 0 // the sandbox holds the expected profile and no finding reaches --fail-on
	ExitWeaker      = 1 // weaker than expected on an axis, or a finding at/above --fail-on
	ExitBadInput    = 2 // the spec or the flags are wrong
	ExitCouldNotRun = 3 // could not verify: engine, image, deadline, interrupted, probe
)

// Outcome names the exit statuses in results and reports.
var outcomes = map[int]string{ExitHolds: "holds", ExitWeaker: "weaker", ExitBadInput: "bad input", ExitCouldNotRun: "could not verify"}

// Check statuses.
const (
	Reached    = "reached"
	NotReached = "not reached"
	NotTested  = "not tested"
)

// Check is one active check verify owns (or a configured probe target) for one member: did the
// member reach it, and the evidence from both ends — the probe's connect or lookup and the
// canary's log.
type Check struct {
	ID       string           `json:"id"` // VFY-EGRESS, VFY-DNS, VFY-HOSTGW, VFY-SCORER, VFY-CFG-*
	Member   string           `json:"member"`
	Target   string           `json:"target"`
	What     string           `json:"what"`
	Status   string           `json:"status"`
	Severity catalog.Severity `json:"severity,omitempty"` // when reached
	Axis     catalog.Axis     `json:"axis"`
	Evidence []string         `json:"evidence"`
}

// Finding is one weakness in the result, whatever found it: lint, the probe or verify.
type Finding struct {
	Source   string           `json:"source"` // lint, probe, verify
	RuleID   string           `json:"ruleId"`
	Title    string           `json:"title"`
	Severity catalog.Severity `json:"severity"`
	Axis     catalog.Axis     `json:"axis"`
	Member   string           `json:"member,omitempty"`
	Message  string           `json:"message"`
	Evidence []string         `json:"evidence,omitempty"`
	File     string           `json:"file,omitempty"`
	Line     int              `json:"line,omitempty"`
	Column   int              `json:"column,omitempty"`
	Fix      string           `json:"fix,omitempty"`
}

// AxisResult compares one axis of the profile.
type AxisResult struct {
	Axis     string   `json:"axis"`
	Expected string   `json:"expected,omitempty"`
	Measured string   `json:"measured,omitempty"`
	Weaker   bool     `json:"weaker"`
	Why      []string `json:"why"`
}

// Step is one stage of a run with its timing.
type Step struct {
	Name       string    `json:"name"`
	Started    time.Time `json:"started"`
	DurationMS int64     `json:"duration_ms"`
	Status     string    `json:"status"` // ok, failed, skipped
	Error      string    `json:"error,omitempty"`
}

// MemberProbe is one probed member's report (secret-free: credentials by name only).
type MemberProbe struct {
	Member string       `json:"member"`
	Role   string       `json:"role"`
	Report probe.Report `json:"report"`
}

// Teardown is what was removed at the end, and what (if anything) the engine still holds with
// the run label afterwards.
type Teardown struct {
	Kept      bool   `json:"kept"`
	Removed   Counts `json:"removed"`
	Remaining Counts `json:"remaining"`
	Command   string `json:"command,omitempty"` // how to remove a kept or left-over run
	Error     string `json:"error,omitempty"`
}

// Counts are resources carrying the run label.
type Counts struct {
	Containers int `json:"containers"`
	Networks   int `json:"networks"`
	Volumes    int `json:"volumes"`
}

// Zero reports whether nothing is counted.
func (c Counts) Zero() bool { return c.Containers+c.Networks+c.Volumes == 0 }

func (c Counts) String() string {
	return fmt.Sprintf("%d container(s), %d network(s), %d volume(s)", c.Containers, c.Networks, c.Volumes)
}

// Result is everything one verify run established. It never holds a secret's value.
type Result struct {
	Version   int              `json:"version"`
	RunID     string           `json:"run"`
	Spec      string           `json:"spec"`
	Backend   string           `json:"backend,omitempty"`
	Project   string           `json:"project,omitempty"`
	SandboxID string           `json:"sandbox,omitempty"`
	Started   time.Time        `json:"started"`
	Finished  time.Time        `json:"finished,omitzero"`
	FailOn    catalog.Severity `json:"fail_on"`

	Expected       Profile      `json:"expected"`
	ExpectedSource string       `json:"expected_source,omitempty"` // flag, spec, lint
	Declared       string       `json:"declared,omitempty"`        // the lint profile
	Measured       Profile      `json:"measured"`
	Axes           []AxisResult `json:"axes"`

	Agent    string        `json:"agent,omitempty"`
	Scorers  []string      `json:"scorers,omitempty"`
	Services []PlanService `json:"services,omitempty"`
	Checks   []Check       `json:"checks"`
	Findings []Finding     `json:"findings"`
	Probes   []MemberProbe `json:"probes"`
	Lint     *spec.Result  `json:"lint,omitempty"`
	Steps    []Step        `json:"steps"`
	Teardown Teardown      `json:"teardown"`
	Notes    []string      `json:"notes,omitempty"`

	Exit    int    `json:"exit"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`

	unverified []string // reasons verification was incomplete
	failures   []string // proven weaknesses (weaker axes, findings at/above fail-on)
	badInput   string
}

// Holds reports whether the sandbox held (exit 0).
func (r Result) Holds() bool { return r.Exit == ExitHolds }

// Summary is one line for the journal and lists.
func (r Result) Summary() string {
	s := fmt.Sprintf("verify %s: %s (expected %s, measured %s)", r.Spec, r.Outcome, r.Expected, r.Measured)
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// Worst is the most severe finding.
func (r Result) Worst() catalog.Severity {
	w := catalog.SeverityNone
	for _, f := range r.Findings {
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w
}

// conclude sets Exit, Outcome and Reason from what the run collected: bad input first, then a
// proven weakness (even when part of the run could not be verified), then incomplete
// verification, else holds.
func (r *Result) conclude() {
	switch {
	case r.badInput != "":
		r.Exit, r.Reason = ExitBadInput, r.badInput
	case len(r.failures) > 0:
		r.Exit, r.Reason = ExitWeaker, strings.Join(r.failures, "; ")
		if len(r.unverified) > 0 {
			r.Reason += "; also could not verify: " + strings.Join(r.unverified, "; ")
		}
	case len(r.unverified) > 0:
		r.Exit, r.Reason = ExitCouldNotRun, strings.Join(r.unverified, "; ")
	default:
		r.Exit, r.Reason = ExitHolds, ""
	}
	r.Outcome = outcomes[r.Exit]
}

package verify

import (
	"context"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// Driver stands specs up on one kind of backend (Docker Compose today; the agent-env chart on
// Kubernetes and Proxmox later). Everything a Session creates carries the run label so
// Teardown can find it from the run ID alone — after a crash as well as after a normal run.
type Driver interface {
	// Name is the backend as shown in results (e.g. docker:default).
	Name() string
	// Load reads the spec (with env for interpolation) into a Session without touching the
	// backend; a spec problem is an InputError.
	Load(ctx context.Context, req LoadRequest) (Session, error)
	// Teardown removes everything carrying runID's label and reports what it removed and what
	// is left.
	Teardown(ctx context.Context, runID string) (removed, remaining Counts, err error)
	// RemoveCommand is a shell command an operator can run to remove runID's resources.
	RemoveCommand(runID string) string
}

// LoadRequest is what a Driver needs to load a spec for one run.
type LoadRequest struct {
	Spec    string
	Env     map[string]string
	RunID   string
	Project string
}

// Session is one stand-up of one spec.
type Session interface {
	// Plan describes the spec's services as the backend will run them.
	Plan() Plan
	// SandboxID is the stood-up sandbox's ID for the probe (e.g. docker:default/<project>).
	SandboxID() string
	// Up creates verify's outside canary and controls, then the sandbox, pointed at them.
	Up(ctx context.Context) error
	// Wait blocks until every member is running (and healthy where it has a healthcheck) and the
	// canary controls have proved the canaries can tell reachable from unreachable.
	Wait(ctx context.Context) error
	// Arm starts the canaries that need the running sandbox (host side of its networks, inside
	// the scorers) and returns, per member to probe, what it must try to reach.
	Arm(ctx context.Context, req ArmRequest) (map[string]MemberTargets, error)
	// Evidence returns every contact the canaries logged.
	Evidence(ctx context.Context) ([]canary.Event, error)
	// Versions are host component versions the probe cannot see from inside.
	Versions(ctx context.Context) verdict.Versions
}

// Noter is a Session that learned something during the run worth telling (e.g. a control that
// had to be repeated); its notes are added to the result.
type Noter interface {
	Notes() []string
}

// Plan is the spec's services as a backend will run them.
type Plan struct {
	Project  string        `json:"project"`
	Services []PlanService `json:"services"` // file order
	Expect   string        `json:"expect,omitempty"`
	Notes    []string      `json:"notes,omitempty"` // deviations from the spec verify had to make
}

// PlanService is one service with what verify needs to pick the agent and the scorers.
type PlanService struct {
	Name         string `json:"name"`
	Line         int    `json:"line,omitempty"`
	XDefault     bool   `json:"x_default,omitempty"`
	DeclaredRole string `json:"declared_role,omitempty"` // x-rangekeeper.role / x-range.role
}

// ArmRequest names the members to probe and the scorers to plant canaries in.
type ArmRequest struct {
	Members []string
	Scorers []string
}

// Target kinds.
const (
	TargetEgress = "egress" // outside canary: a listener off every sandbox network
	TargetHostGW = "hostgw" // host side of a sandbox network
	TargetScorer = "scorer" // inside a scorer's network namespace
)

// Target is one address a member's probe dials, and the canary tag that logs the contact.
type Target struct {
	Kind   string `json:"kind"`
	Addr   string `json:"addr"`
	Tag    string `json:"tag"`
	What   string `json:"what"`
	Scorer string `json:"scorer,omitempty"`
}

// MemberTargets is what one member tries to reach.
type MemberTargets struct {
	Targets []Target `json:"targets"`
	// DNSName is resolved through the member's resolvers ("*" becomes a nonce); every name
	// ending in DNSSuffix reaching the DNS canary is this member's.
	DNSName   string `json:"dns_name,omitempty"`
	DNSSuffix string `json:"dns_suffix,omitempty"`
	// NoDNS says why DNS is not checked for this member (its resolvers are not verify's).
	NoDNS string `json:"no_dns,omitempty"`
}

// ProbeRequest is one probe run in one member.
type ProbeRequest struct {
	SandboxID string
	Member    string
	Targets   facts.Targets
}

// Prober runs the escape probe in one member and returns its raw result (verify assesses it,
// together with the lint findings and its own checks). The action layer's probe plugs in here.
type Prober interface {
	Probe(ctx context.Context, req ProbeRequest) (probe.Result, error)
}

// ProberFunc adapts a function to Prober.
type ProberFunc func(ctx context.Context, req ProbeRequest) (probe.Result, error)

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context, req ProbeRequest) (probe.Result, error) {
	return f(ctx, req)
}

// Recorder stores a run: it is called once when the run starts (Finished is zero) and once when
// it is over, so an interrupted run leaves a trace in the journal.
type Recorder interface {
	Record(ctx context.Context, r Result) error
}

// Package sandbox is the vocabulary every floor shares: what a sandbox, a member, a finding and a
// snapshot are. It sits beneath both backends (which produce these values) and state (which
// persists them), so neither needs to import the other.
package sandbox

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Kind names a backend family.
type Kind string

const (
	KindDocker     Kind = "docker"
	KindKubernetes Kind = "k8s"
	KindProxmox    Kind = "pve"
)

// Status is a sandbox's aggregate state derived from its members.
type Status string

const (
	StatusRunning Status = "running" // every member runs
	StatusPartial Status = "partial" // some members run
	StatusStopped Status = "stopped" // no member runs
	StatusUnknown Status = "unknown" // the backend cannot tell (e.g. unreachable)
)

// Member is one unit of a sandbox: a container, a pod or a VM.
type Member struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Service  string            `json:"service,omitempty"` // compose service, inspect/service, or VM role
	State    string            `json:"state"`             // backend-native state (running, exited, Pending, stopped…)
	Running  bool              `json:"running"`
	Image    string            `json:"image,omitempty"`
	Created  time.Time         `json:"created"`
	Restarts int               `json:"restarts,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// Sandbox is what Inspect creates for one sample: a compose project, a Helm release or a group of
// Proxmox VMs. ID is stable and backend-qualified ("docker:<endpoint>/<project>").
type Sandbox struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Backend  Kind              `json:"backend"`
	Endpoint string            `json:"endpoint"`
	Status   Status            `json:"status"`
	Created  time.Time         `json:"created"`
	Labels   map[string]string `json:"labels,omitempty"`
	Task     string            `json:"task,omitempty"`   // eval task hint, where derivable
	Sample   string            `json:"sample,omitempty"` // sample hint, where derivable
	Inspect  bool              `json:"inspect"`          // made by Inspect (name pattern, label or tag)
	// Actionable is false for resources that are not sandboxes (plain containers listed with --all);
	// the action layer refuses them.
	Actionable bool      `json:"actionable"`
	Members    []Member  `json:"members"`
	Findings   []Finding `json:"findings,omitempty"` // live posture, when the backend computes it
	// PosturePending says why Findings are not yet complete (e.g. the network policies are still
	// loading); empty once they are. A pending posture may lack findings, never hold false ones.
	PosturePending string     `json:"posture_pending,omitempty"`
	Simulated      bool       `json:"simulated,omitempty"`
	Extra          []KeyValue `json:"extra,omitempty"` // backend-specific facts shown in detail (pool, zone, namespace…)
}

// KeyValue is an ordered detail fact.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Finding is a posture weakness using the same rule IDs and severities as the spec linter.
type Finding struct {
	RuleID   string   `json:"rule"`
	Severity Severity `json:"severity"`
	Axis     Axis     `json:"axis"`
	Member   string   `json:"member,omitempty"`
	Message  string   `json:"message"`
	Evidence string   `json:"evidence,omitempty"`
	// Network is the one network the finding is about, when it is about one (an agent on a
	// non-internal network): the event that joined the member to it is the finding's cause.
	Network string `json:"network,omitempty"`
}

// Severity and Axis are the hardening vocabulary shared with the spec linter.
type (
	Severity = catalog.Severity
	Axis     = catalog.Axis
)

// SeverityNone re-exports the zero severity.
const SeverityNone = catalog.SeverityNone

// WorstSeverity returns the most severe finding's severity, or SeverityNone.
func (s *Sandbox) WorstSeverity() Severity {
	worst := SeverityNone
	for _, f := range s.Findings {
		if f.Severity > worst {
			worst = f.Severity
		}
	}
	return worst
}

// DeriveStatus computes the aggregate status from members.
func DeriveStatus(members []Member) Status {
	if len(members) == 0 {
		return StatusUnknown
	}
	running := 0
	for _, m := range members {
		if m.Running {
			running++
		}
	}
	switch {
	case running == len(members):
		return StatusRunning
	case running == 0:
		return StatusStopped
	default:
		return StatusPartial
	}
}

// SnapshotInfo describes one stored snapshot of a sandbox.
type SnapshotInfo struct {
	ID        string            `json:"id"`
	SandboxID string            `json:"sandbox"`
	Name      string            `json:"name"`
	Created   time.Time         `json:"created"`
	Members   []string          `json:"members,omitempty"`
	Size      int64             `json:"size,omitempty"`
	Details   map[string]string `json:"details,omitempty"`
}

// SnapshotRecord is a stored snapshot: the backend-neutral info plus the backend's own recipe
// (Data) for recreating the sandbox exactly.
type SnapshotRecord struct {
	Info    SnapshotInfo    `json:"info"`
	Backend string          `json:"backend"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Age renders a compact duration the way every list shows it (k9s style): 45s, 12m, 3h, 9d.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// Package backends defines the contract every sandbox backend (Docker, Kubernetes, Proxmox) meets:
// a small core (identity, watch) and optional action capabilities, each declared with a reason
// when unsupported.
package backends

import (
	"context"
	"errors"
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
	Actionable bool       `json:"actionable"`
	Members    []Member   `json:"members"`
	Findings   []Finding  `json:"findings,omitempty"` // live posture, when the backend computes it
	Simulated  bool       `json:"simulated,omitempty"`
	Extra      []KeyValue `json:"extra,omitempty"` // backend-specific facts shown in detail (pool, zone, namespace…)
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
}

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

// EventType says what an Event carries.
type EventType int

const (
	// EventReset replaces every sandbox of the backend with Sandboxes (sent after each (re)list).
	EventReset EventType = iota
	// EventUpsert adds or replaces one sandbox.
	EventUpsert
	// EventRemove removes the sandbox with ID.
	EventRemove
)

// Event is one change in a backend's fleet.
type Event struct {
	Type      EventType
	Sandboxes []Sandbox // EventReset: the whole fleet of this backend
	Sandbox   Sandbox   // EventUpsert
	ID        string    // EventRemove
}

// Backend is the core contract. Watch lists the backend's sandboxes, emits one EventReset, then
// emits incremental events until ctx is done or the connection is lost; it returns the error that
// ended it (nil only when ctx was cancelled). Emit must not block for long: the supervisor buffers.
// Watch is called again (with backoff) after it returns an error, and must then re-list.
type Backend interface {
	// Name is the backend-qualified endpoint name shown to operators, e.g. "docker:default".
	Name() string
	Kind() Kind
	Watch(ctx context.Context, emit func(Event)) error
}

// Closer is implemented by backends that hold connections.
type Closer interface{ Close() error }

// ErrNotFound is returned by actions on an unknown sandbox ID.
var ErrNotFound = errors.New("sandbox not found")

// ErrNotSandbox is returned when an action targets a resource not identified as a sandbox.
var ErrNotSandbox = errors.New("not a sandbox: refusing to act on a resource rangekeeper did not identify as a sandbox")

// Severity and Axis are the hardening vocabulary shared with the spec linter.
type (
	Severity = catalog.Severity
	Axis     = catalog.Axis
)

// SeverityNone re-exports the zero severity for callers that only import backends.
const SeverityNone = catalog.SeverityNone

// Package backends defines the contract every sandbox backend (Docker, Kubernetes, Proxmox) meets:
// a small core (identity, watch) and optional action capabilities, each declared with a reason
// when unsupported.
package backends

import (
	"context"
	"errors"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// The sandbox vocabulary lives in package sandbox, beneath both backends and state; these aliases
// keep it spelled backends.X for the code that meets it through the backend contract.
type (
	Kind     = sandbox.Kind
	Status   = sandbox.Status
	Member   = sandbox.Member
	Sandbox  = sandbox.Sandbox
	KeyValue = sandbox.KeyValue
	Finding  = sandbox.Finding
	Activity = sandbox.Activity
)

const (
	KindDocker     = sandbox.KindDocker
	KindKubernetes = sandbox.KindKubernetes
	KindProxmox    = sandbox.KindProxmox

	StatusRunning = sandbox.StatusRunning
	StatusPartial = sandbox.StatusPartial
	StatusStopped = sandbox.StatusStopped
	StatusUnknown = sandbox.StatusUnknown
)

// DeriveStatus computes the aggregate status from members.
func DeriveStatus(members []Member) Status { return sandbox.DeriveStatus(members) }

// EventType says what an Event carries.
type EventType int

const (
	// EventReset replaces every sandbox of the backend with Sandboxes (sent after each (re)list).
	EventReset EventType = iota
	// EventUpsert adds or replaces one sandbox.
	EventUpsert
	// EventRemove removes the sandbox with ID.
	EventRemove
	// EventActivity reports something that happened to a sandbox (Activity); it does not change
	// the fleet. The supervisor keeps a bounded log of them for the timeline and drift checks.
	EventActivity
)

// Event is one change in a backend's fleet.
type Event struct {
	Type      EventType
	Sandboxes []Sandbox // EventReset: the whole fleet of this backend
	Sandbox   Sandbox   // EventUpsert
	ID        string    // EventRemove
	Activity  *Activity // EventActivity
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
	Severity = sandbox.Severity
	Axis     = sandbox.Axis
)

// SeverityNone re-exports the zero severity for callers that only import backends.
const SeverityNone = sandbox.SeverityNone

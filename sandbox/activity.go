package sandbox

import "time"

// ActivityKind names something that happened to a sandbox or one of its members.
type ActivityKind string

// Kinds the backends report. A backend reports what its engine tells it; not every backend has
// every kind.
const (
	ActCreate        ActivityKind = "create"             // a member was created
	ActStart         ActivityKind = "start"              // a member started
	ActStop          ActivityKind = "stop"               // a member was stopped (or paused)
	ActDie           ActivityKind = "die"                // a member's main process ended (Attrs["exit_code"])
	ActOOM           ActivityKind = "oom"                // a member was killed for memory
	ActRestart       ActivityKind = "restart"            // a member restarted (Attrs["reason"] when known)
	ActDestroy       ActivityKind = "destroy"            // a member was removed
	ActExec          ActivityKind = "exec"               // a process was started in a member (Actor: its user)
	ActNetConnect    ActivityKind = "network-connect"    // a member joined a network (Attrs["network"])
	ActNetDisconnect ActivityKind = "network-disconnect" // a member left a network (Attrs["network"])
	ActHealth        ActivityKind = "health"             // a member's health changed (Attrs["status"])
	ActUpdate        ActivityKind = "update"             // a member's configuration changed in place
	ActPolicy        ActivityKind = "policy"             // a network policy of the sandbox changed (Attrs["change"])
	ActTask          ActivityKind = "task"               // a backend task ran on a member (Proxmox UPIDs)
	ActEvent         ActivityKind = "event"              // anything else the backend reported (Kubernetes events)
)

// Activity is one thing that happened to a sandbox, as its backend reported it: the raw material
// of the timeline and of posture drift. Detail and Attrs never carry secret
// values: an exec's arguments are reduced to the command name.
type Activity struct {
	Time      time.Time         `json:"time"`
	SandboxID string            `json:"sandbox"`
	Member    string            `json:"member,omitempty"`
	Kind      ActivityKind      `json:"kind"`
	Actor     string            `json:"actor,omitempty"`  // who or what caused it, when the backend says
	Detail    string            `json:"detail,omitempty"` // a one-line summary
	Attrs     map[string]string `json:"attrs,omitempty"`
}

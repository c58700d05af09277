package sandbox

import (
	"encoding/json"
	"time"
)

// PendingAction is the write-ahead record of a multi-step action: written before its first
// destructive step and removed when it ends, so an action cut short (a crash, kill -9, a lost
// connection) is found on the next start and finished or rolled back from what it says. ID is
// the Seq of the action's journal intent, which links the two.
type PendingAction struct {
	ID        uint64            `json:"id"`
	Action    string            `json:"action"`
	SandboxID string            `json:"sandbox"`
	Backend   string            `json:"backend"`
	Operator  string            `json:"operator,omitempty"`
	PID       int               `json:"pid"`
	Host      string            `json:"host,omitempty"`
	Started   time.Time         `json:"started"`
	Updated   time.Time         `json:"updated"`
	Params    map[string]string `json:"params,omitempty"`
	// Plan is the backend's own description of what it is about to do (which snapshot, which
	// members it pauses, which images it makes); the backend's Recover reads it.
	Plan json.RawMessage `json:"plan,omitempty"`
	// Steps are the progress steps reached, oldest first (bounded).
	Steps []string `json:"steps,omitempty"`
	// Failed is set when the action returned an error that left the sandbox half-done (rather
	// than the process dying); the record then waits for a recover like an interrupted one.
	Failed string `json:"failed,omitempty"`
}

// LastStep is the newest step reached, or "started".
func (p PendingAction) LastStep() string {
	if len(p.Steps) == 0 {
		return "started"
	}
	return p.Steps[len(p.Steps)-1]
}

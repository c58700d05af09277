package inspectlive

import (
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
)

// EvalKey names one running (or recently ended) eval: its sample-buffer database's path, unique
// per eval process and log.
type EvalKey string

// Re-exported so a caller needs only this package.
type (
	SampleState = buffer.SampleState
	Command     = buffer.Command
	Status      = buffer.Status
)

// The sample statuses, re-exported.
const (
	StatusInit      = buffer.StatusInit
	StatusRunning   = buffer.StatusRunning
	StatusCompleted = buffer.StatusCompleted
	StatusErrored   = buffer.StatusErrored
	StatusFlushed   = buffer.StatusFlushed
	StatusEnded     = buffer.StatusEnded
)

// Eval is one eval process's eval as the sources show it.
type Eval struct {
	Key        EvalKey       `json:"key"`
	DataDir    string        `json:"data_dir"`
	PID        int           `json:"pid"`
	Alive      bool          `json:"alive"`           // the pid exists on this host
	Ended      bool          `json:"ended,omitempty"` // the buffer database is gone: the eval finished or died
	EndedAt    time.Time     `json:"ended_at,omitzero"`
	Stale      bool          `json:"stale,omitempty"` // the last poll found the database locked; state is from before
	BufferPath string        `json:"buffer"`
	LogPath    string        `json:"log,omitempty"` // "" when the .eval was not found in the log dirs
	TracePath  string        `json:"trace,omitempty"`
	Control    string        `json:"control,omitempty"` // the control discovery file, if any
	Task       string        `json:"task"`
	TaskID     string        `json:"task_id,omitempty"`
	Model      string        `json:"model,omitempty"`
	EvalID     string        `json:"eval_id,omitempty"`
	RunID      string        `json:"run_id,omitempty"`
	Created    time.Time     `json:"created,omitzero"`
	Samples    []SampleState `json:"samples"`
	Problems   []string      `json:"problems,omitempty"` // per-source errors, each naming its file
}

// Ref is the short reference a Link carries.
func (e *Eval) Ref() EvalRef {
	return EvalRef{Key: e.Key, Task: e.Task, Model: e.Model, LogPath: e.LogPath, PID: e.PID, EvalID: e.EvalID}
}

// EvalRef identifies the eval a sandbox belongs to.
type EvalRef struct {
	Key     EvalKey `json:"key,omitempty"`
	Task    string  `json:"task,omitempty"`
	Model   string  `json:"model,omitempty"`
	LogPath string  `json:"log,omitempty"`
	PID     int     `json:"pid,omitempty"`
	EvalID  string  `json:"eval_id,omitempty"`
}

// How says how sure a link is, strongest first.
type How string

const (
	HowExact   How = "exact"   // an identity the sandbox carries (pod label uuid, Proxmox VMID in the transcript)
	HowMatched How = "matched" // a trace or guessed link confirmed by a command the sandbox ran
	HowTrace   How = "trace"   // Inspect's trace file names the compose project for the sample
	HowGuessed How = "guessed" // the task from the project name; the sample is unknown
	HowUnknown How = "unknown"
)

// Link ties one sandbox to its eval and sample.
type Link struct {
	SandboxID string  `json:"sandbox"`
	Eval      EvalRef `json:"eval"`
	SampleID  string  `json:"sample_id,omitempty"`
	Epoch     int     `json:"epoch,omitempty"`
	UUID      string  `json:"uuid,omitempty"`
	How       How     `json:"how"`
	Why       string  `json:"why"`              // the evidence, in words
	Status    Status  `json:"status,omitempty"` // the sample's status when known
	// Orphaned: the eval process is gone (pid dead) and the sample finished or the eval ended,
	// yet the sandbox is still here.
	Orphaned bool `json:"orphaned,omitempty"`
	// Superseded: an earlier attempt of a retried sample; a newer sandbox serves it now.
	Superseded bool `json:"superseded,omitempty"`
}

// Linked reports whether the sample is known.
func (l Link) Linked() bool { return l.SampleID != "" }

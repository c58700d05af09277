// Package buffer reads one Inspect realtime sample-buffer database (SQLite, read-only) and folds
// its rows into per-sample state: progress, the agent's sandbox commands, errors, limits, tokens,
// score and the logger lines the Proxmox linkage needs.
package buffer

import (
	"regexp"
	"strconv"
	"time"
)

// Key names one sample of one eval: Inspect keys samples by (id, epoch).
type Key struct {
	ID    string
	Epoch int
}

func (k Key) String() string { return k.ID + "/" + strconv.Itoa(k.Epoch) }

// Status is a sample's progress as the buffer shows it.
type Status string

const (
	StatusInit      Status = "init"      // events arrived, no samples row yet (sandbox coming up)
	StatusRunning   Status = "running"   // the samples row exists and is not complete
	StatusCompleted Status = "completed" // the row says completed (Limit may say why it stopped)
	StatusErrored   Status = "errored"   // completed with an error
	StatusFlushed   Status = "flushed"   // the row left the buffer: written to the .eval (or retried)
	StatusEnded     Status = "ended"     // the database vanished while the sample was unfinished
)

// Done reports whether the sample will make no more progress in this buffer.
func (s Status) Done() bool {
	return s == StatusCompleted || s == StatusErrored || s == StatusFlushed || s == StatusEnded
}

// Command is one thing the agent ran in its sandbox: a completed SandboxEvent, or the in-flight
// (pending) ToolEvent. Output is deliberately absent: ask Reader.Output for it on demand, so
// snapshots stay small. Env values of the event's options are never kept.
type Command struct {
	Seq      int64     `json:"seq"` // the events row id: stable handle for Output
	Time     time.Time `json:"time"`
	Action   string    `json:"action"`             // exec, read_file, write_file; "tool" when pending
	Cmd      string    `json:"cmd"`                // may be attachment://<hash> for a long pending tool call
	Exit     *int      `json:"exit,omitempty"`     // exit code, nil when unknown or pending
	Result   string    `json:"result,omitempty"`   // a result that is not an exit code (e.g. a refusal)
	Reason   string    `json:"reason,omitempty"`   // why, when Inspect says (e.g. "policy")
	Function string    `json:"function,omitempty"` // the tool's function for a pending ToolEvent
	Pending  bool      `json:"pending,omitempty"`
}

// ProxmoxHint is what the sample's transcript says about the Proxmox instance and VMs it holds.
type ProxmoxHint struct {
	Instance string         `json:"instance,omitempty"`
	Host     string         `json:"host,omitempty"`
	Port     string         `json:"port,omitempty"`
	Node     string         `json:"node,omitempty"`
	VMs      map[int]string `json:"vms,omitempty"` // vmid → VM name
}

// SampleState is the folded view of one sample. Values handed out are copies.
type SampleState struct {
	ID        string       `json:"id"`
	Epoch     int          `json:"epoch"`
	UUID      string       `json:"uuid,omitempty"`
	Status    Status       `json:"status"`
	StartedAt time.Time    `json:"started_at,omitzero"`
	TotalTime float64      `json:"total_time,omitempty"` // seconds, from the summary
	Tokens    int64        `json:"tokens"`               // completed ModelEvents' total_tokens
	Usage     int64        `json:"usage,omitempty"`      // the summary's model_usage total, when set
	Score     string       `json:"score,omitempty"`      // latest ScoreEvent or summary score value
	ScoreNote string       `json:"score_note,omitempty"` // where a flushed sample's score came from, or why it is unknown
	Error     string       `json:"error,omitempty"`      // the summary's error, else the latest ErrorEvent
	Errors    []string     `json:"errors,omitempty"`     // ErrorEvents and tool errors, newest last
	Limit     string       `json:"limit,omitempty"`      // the summary's limit, else the latest limit event
	Limits    []string     `json:"limits,omitempty"`     // SampleLimitEvents: "<type>: <message>"
	Pending   *Command     `json:"pending,omitempty"`    // the in-flight tool call
	Commands  []Command    `json:"commands,omitempty"`   // the last MaxCommands sandbox commands
	Logger    []string     `json:"logger,omitempty"`     // the last MaxLogger LoggerEvent messages
	Proxmox   *ProxmoxHint `json:"proxmox,omitempty"`
	Updated   time.Time    `json:"updated"` // when this reader last saw the sample change
	LastEvent time.Time    `json:"last_event,omitzero"`
	Retries   int          `json:"retries,omitempty"`
}

// Clone is a deep copy safe to hand to another goroutine.
func (s *SampleState) Clone() SampleState {
	c := *s
	c.Errors = append([]string(nil), s.Errors...)
	c.Limits = append([]string(nil), s.Limits...)
	c.Commands = append([]Command(nil), s.Commands...)
	c.Logger = append([]string(nil), s.Logger...)
	if s.Pending != nil {
		p := *s.Pending
		c.Pending = &p
	}
	if s.Proxmox != nil {
		p := *s.Proxmox
		p.VMs = make(map[int]string, len(s.Proxmox.VMs))
		for k, v := range s.Proxmox.VMs {
			p.VMs[k] = v
		}
		c.Proxmox = &p
	}
	return c
}

// Bounds on what one sample keeps: a long agent run must not grow memory without limit.
const (
	MaxCommands = 64
	MaxLogger   = 32
	maxErrors   = 16
	maxOutput   = 16 << 10
)

// The proxmoxsandbox provider's INFO lines (sample_init), which become LoggerEvents.
var (
	vmReadyRE  = regexp.MustCompile(`VM (\S+) \(ID=(\d+)\) is ready`)
	acquiredRE = regexp.MustCompile(`Acquired instance (\S+) from pool '[^']*': host=(\S+) port=(\d+) node=(\S+)`)
)

// noteLogger folds one logger line into the Proxmox hint.
func (s *SampleState) noteLogger(msg string) {
	if m := vmReadyRE.FindStringSubmatch(msg); m != nil {
		id, err := strconv.Atoi(m[2])
		if err == nil {
			s.proxmox().VMs[id] = m[1]
		}
	}
	if m := acquiredRE.FindStringSubmatch(msg); m != nil {
		p := s.proxmox()
		p.Instance, p.Host, p.Port, p.Node = m[1], m[2], m[3], m[4]
	}
	s.Logger = appendBounded(s.Logger, msg, MaxLogger)
}

func (s *SampleState) proxmox() *ProxmoxHint {
	if s.Proxmox == nil {
		s.Proxmox = &ProxmoxHint{VMs: map[int]string{}}
	}
	return s.Proxmox
}

func appendBounded[T any](xs []T, x T, n int) []T {
	xs = append(xs, x)
	if len(xs) > n {
		xs = append(xs[:0:0], xs[len(xs)-n:]...)
	}
	return xs
}

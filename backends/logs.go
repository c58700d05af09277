package backends

import (
	"context"
	"time"
)

// LogOptions select what a log stream carries.
type LogOptions struct {
	// Member is one member (name, ID or service, as ExecRequest.Member); "" means every member
	// of the sandbox, interleaved, each line naming its member.
	Member string
	// Follow keeps the stream open for new lines until ctx ends (or every member stops).
	Follow bool
	// Since drops lines older than this (zero: from the start the engine keeps).
	Since time.Time
	// Tail is the number of most recent lines per member to start with; negative: all.
	Tail int
	// Previous asks for the previous instance of a restarted member where the backend keeps it
	// (Kubernetes' previous container); others ignore it.
	Previous bool
}

// LogStream names where a line came from.
const (
	LogStdout = "stdout"
	LogStderr = "stderr"
	LogTask   = "task"    // a backend task log (Proxmox)
	LogSystem = "journal" // a guest's system journal (Proxmox guest agent)
)

// LogLine is one line of a member's output. Text carries no trailing newline; lines longer
// than MaxLogLine are cut there (Cut says so).
type LogLine struct {
	Time   time.Time `json:"time"`
	Member string    `json:"member"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
	Cut    bool      `json:"cut,omitempty"`
}

// MaxLogLine bounds one line kept from a log, so a member printing without newlines cannot grow
// the reader without bound.
const MaxLogLine = 4096

// LogStream delivers lines until the logs end. Next blocks; it returns io.EOF when the stream
// ended normally (not following, or every member stopped) and ctx's error when it was cancelled.
// Close ends the stream and releases its connections; it is safe to call more than once.
type LogStream interface {
	Next() (LogLine, error)
	Close() error
}

// LogReader is implemented by backends that can read their members' logs.
type LogReader interface {
	Logs(ctx context.Context, sandboxID string, opts LogOptions) (LogStream, error)
}

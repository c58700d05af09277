package backends

import (
	"context"
	"io"
)

// TermSize is a terminal's size in cells.
type TermSize struct{ Width, Height uint }

// ShellRequest opens an interactive shell in one member.
type ShellRequest struct {
	Member string // as ExecRequest.Member
	User   string // "" for the member's default user
	// Cmd overrides the shell; nil picks it like Inspect's connection command: `bash -l` where
	// bash exists, else `sh`.
	Cmd    []string
	Stdin  io.Reader
	Stdout io.Writer // the TTY's one output stream
	// Size is the starting size; Resize delivers later ones (closed or nil: no resizes).
	Size   TermSize
	Resize <-chan TermSize
}

// ShellResult is how a shell session ended.
type ShellResult struct {
	Member   string   `json:"member"` // the member's resolved name
	Cmd      []string `json:"cmd"`    // the shell that ran
	ExitCode int      `json:"exit_code"`
}

// Sheller opens interactive shells with a TTY. Shell returns when the shell exits (or ctx ends);
// ctrl-c and every other key go to the remote process, not to rangekeeper.
type Sheller interface {
	Shell(ctx context.Context, sandboxID string, req ShellRequest) (ShellResult, error)
}

package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
)

type resultsKey struct{}

// SetResult records a result of the running action (an exit code) for its journal outcome
// entry; outside Run it does nothing. Values pass the journal's redaction like every parameter.
func SetResult(ctx context.Context, key, value string) {
	if m, ok := ctx.Value(resultsKey{}).(map[string]string); ok {
		m[key] = value
	}
}

// Shell opens an interactive shell in a member. It is journaled like every mutating
// action — the intent with the member, user and shell, the outcome with the exit code — and
// never the keystrokes; it is refused in read-only mode and to identities that may not change
// a sandbox. The sandbox's action lock is held while the shell is open.
func (l *Layer) Shell(ctx context.Context, req Request, sr backends.ShellRequest) (backends.ShellResult, error) {
	req.Action = backends.ActionShell
	member := sr.Member
	if member == "" {
		member = "(default)"
	}
	req.Params = map[string]string{"member": member}
	if sr.User != "" {
		req.Params["user"] = sr.User
	}
	if len(sr.Cmd) > 0 {
		req.Params["cmd"] = strings.Join(sr.Cmd, " ")
	}
	var res backends.ShellResult
	err := l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		sh, ok := b.(backends.Sheller)
		if !ok {
			return fmt.Errorf("shell: %w", ErrUnsupported)
		}
		var err error
		res, err = sh.Shell(ctx, sb.ID, sr)
		if res.Member != "" {
			SetResult(ctx, "member", res.Member)
			SetResult(ctx, "shell", strings.Join(res.Cmd, " "))
		}
		if err == nil {
			SetResult(ctx, "exit_code", strconv.Itoa(res.ExitCode))
		}
		return err
	})
	return res, err
}

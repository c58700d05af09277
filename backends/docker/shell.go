package docker

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.Sheller = (*Backend)(nil)

// pickShell chooses the shell the way Inspect's docker connection command does: `bash -l` when
// the member has bash, else `sh`.
func (b *Backend) pickShell(ctx context.Context, sandboxID, member, user string) []string {
	res, err := b.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, User: user, Timeout: 10 * time.Second,
		Cmd: []string{"sh", "-c", "command -v bash"}})
	if err == nil && res.ExitCode == 0 && len(res.Stdout) > 0 {
		return []string{"bash", "-l"}
	}
	return []string{"sh"}
}

// Shell implements backends.Sheller: an exec with a TTY over the engine's hijacked connection.
// Keys (ctrl-c included) go to the remote process as typed; window sizes are applied as they
// arrive; the result carries the shell's exit code.
func (b *Backend) Shell(ctx context.Context, sandboxID string, req backends.ShellRequest) (backends.ShellResult, error) {
	c, err := b.member(ctx, sandboxID, req.Member)
	if err != nil {
		return backends.ShellResult{}, err
	}
	res := backends.ShellResult{Member: containerName(c), Cmd: req.Cmd}
	if len(res.Cmd) == 0 {
		res.Cmd = b.pickShell(ctx, sandboxID, c.ID, req.User)
	}
	size := client.ConsoleSize{Height: max(req.Size.Height, 1), Width: max(req.Size.Width, 1)}
	created, err := b.cli.ExecCreate(ctx, c.ID, client.ExecCreateOptions{User: req.User, Cmd: res.Cmd, TTY: true, ConsoleSize: size,
		AttachStdin: true, AttachStdout: true, AttachStderr: true, Env: []string{"TERM=xterm-256color"}})
	if err != nil {
		return res, b.wrap(fmt.Errorf("shell in %s: %w", res.Member, err))
	}
	att, err := b.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{TTY: true, ConsoleSize: size})
	if err != nil {
		return res, b.wrap(fmt.Errorf("shell in %s: attach: %w", res.Member, err))
	}
	defer att.Close()
	// Engines before API 1.42 ignore the console size given at create: size it once started
	// (the docker CLI's way, retrying while the process starts).
	for i := range 10 {
		if _, err := b.cli.ExecResize(ctx, created.ID, client.ExecResizeOptions(size)); err == nil {
			break
		}
		time.Sleep(time.Duration(i+1) * 10 * time.Millisecond)
	}
	if req.Stdin != nil {
		// Ends at the first Read or Write after the session: the caller cancels its terminal
		// reader (ttyshell), or the closed connection fails the Write.
		go func() { _, _ = io.Copy(att.Conn, req.Stdin) }()
	}
	if req.Resize != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case s, ok := <-req.Resize:
					if !ok {
						return
					}
					_, _ = b.cli.ExecResize(ctx, created.ID, client.ExecResizeOptions{Height: s.Height, Width: s.Width})
				}
			}
		}()
	}
	out := req.Stdout
	if out == nil {
		out = io.Discard
	}
	done := make(chan error, 1)
	go func() { _, err := io.Copy(out, att.Reader); done <- err }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = b.killExec(created.ID, c.ID)
		att.Close()
		<-done
		return res, ctx.Err()
	}
	ins, err := b.execInspect(created.ID)
	if err != nil {
		return res, b.wrap(fmt.Errorf("shell in %s: exit code: %w", res.Member, err))
	}
	res.ExitCode = ins.ExitCode
	return res, nil
}

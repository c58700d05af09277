package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.Executor = (*Backend)(nil)

// DefaultService is the service Inspect treats as the sandbox's default (its "default" sandbox).
const DefaultService = "default"

// MaxExecOutput caps each of stdout and stderr kept from one exec, so a hostile sandbox cannot
// exhaust the operator's memory by printing forever. Output beyond it is read and discarded, and
// Exec returns ErrOutputTruncated alongside the result.
const MaxExecOutput = 64 << 20

// ErrOutputTruncated is returned (wrapped, with a usable result) when output exceeded MaxExecOutput.
var ErrOutputTruncated = errors.New("exec output truncated")

// members lists a project's containers (running or not), sorted by service then container number.
func (b *Backend) members(ctx context.Context, project string) ([]container.Summary, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelProject+"="+project)})
	if err != nil {
		return nil, b.wrap(err)
	}
	cs := res.Items
	sort.Slice(cs, func(i, j int) bool {
		si, sj := cs[i].Labels[LabelService], cs[j].Labels[LabelService]
		if si != sj {
			return si < sj
		}
		return cs[i].Labels[LabelNumber] < cs[j].Labels[LabelNumber]
	})
	return cs, nil
}

func containerName(c container.Summary) string {
	if len(c.Names) > 0 {
		return strings.TrimPrefix(c.Names[0], "/")
	}
	return c.ID
}

// member resolves sel to one container of the sandbox: by compose service name, container name
// or (a prefix of, at least 12 characters) container ID. An empty sel picks Inspect's default
// service "default"; when there is none, the first service alphabetically (Inspect's x-default
// marker lives in the compose file only and is not visible at runtime).
func (b *Backend) member(ctx context.Context, sandboxID, sel string) (container.Summary, error) {
	project, err := b.ProjectOf(sandboxID)
	if err != nil {
		return container.Summary{}, err
	}
	cs, err := b.members(ctx, project)
	if err != nil {
		return container.Summary{}, err
	}
	if len(cs) == 0 {
		return container.Summary{}, fmt.Errorf("%w: %s has no containers", backends.ErrNotFound, sandboxID)
	}
	if sel == "" {
		for _, c := range cs {
			if c.Labels[LabelService] == DefaultService {
				return c, nil
			}
		}
		return cs[0], nil
	}
	for _, c := range cs {
		if c.Labels[LabelService] == sel || containerName(c) == sel || c.ID == sel ||
			(len(sel) >= 12 && strings.HasPrefix(c.ID, sel)) {
			return c, nil
		}
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Labels[LabelService])
	}
	return container.Summary{}, fmt.Errorf("%w: no member %q in %s (services: %s)", backends.ErrNotFound, sel, sandboxID, strings.Join(names, ", "))
}

// Exec implements backends.Executor. stdout and stderr are demultiplexed; req.Timeout (or ctx's
// deadline) ends the command: the process is killed and the result says TimedOut. A cancelled
// ctx also kills the process and returns ctx's error.
func (b *Backend) Exec(ctx context.Context, sandboxID string, req backends.ExecRequest) (backends.ExecResult, error) {
	if len(req.Cmd) == 0 {
		return backends.ExecResult{}, fmt.Errorf("exec in %s: empty command", sandboxID)
	}
	c, err := b.member(ctx, sandboxID, req.Member)
	if err != nil {
		return backends.ExecResult{}, err
	}
	name := containerName(c)
	created, err := b.cli.ExecCreate(ctx, c.ID, client.ExecCreateOptions{
		User: req.User, Env: req.Env, WorkingDir: req.WorkDir, Cmd: req.Cmd,
		AttachStdin: req.Stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return backends.ExecResult{}, b.wrap(fmt.Errorf("exec in %s: %w", name, err))
	}
	// Attach starts the process. It is not cut short by ctx: a cancel in the middle could leave
	// the engine starting a process nobody kills; a cancel is handled below, once it has started.
	att, err := b.cli.ExecAttach(context.WithoutCancel(ctx), created.ID, client.ExecAttachOptions{})
	if err != nil {
		return backends.ExecResult{}, b.wrap(fmt.Errorf("exec in %s: attach: %w", name, err))
	}
	defer att.Close()

	if req.Stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, req.Stdin)
			_ = att.CloseWrite()
		}()
	}
	stdout, stderr := &backends.CappedBuffer{Max: MaxExecOutput}, &backends.CappedBuffer{Max: MaxExecOutput}
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		done <- err
	}()

	var timeout <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var res backends.ExecResult
	select {
	case err := <-done:
		if err != nil {
			return res, b.wrap(fmt.Errorf("exec in %s: read output: %w", name, err))
		}
	case <-timeout:
		res.TimedOut = true
	case <-ctx.Done():
	}
	if res.TimedOut || ctx.Err() != nil {
		killErr := b.killExec(created.ID, c.ID)
		att.Close()
		<-done
		res.Stdout, res.Stderr, res.ExitCode = stdout.Bytes(), stderr.Bytes(), -1
		if killErr != nil {
			killErr = fmt.Errorf("exec in %s: could not kill the process: %w", name, killErr)
		}
		if ctx.Err() != nil && !res.TimedOut {
			return res, errors.Join(fmt.Errorf("exec in %s: %w", name, ctx.Err()), killErr)
		}
		if ins, err := b.execInspect(created.ID); err == nil && !ins.Running {
			res.ExitCode = ins.ExitCode
		}
		return res, killErr
	}
	ins, err := b.execInspect(created.ID)
	if err != nil {
		return res, b.wrap(fmt.Errorf("exec in %s: exit code: %w", name, err))
	}
	res.ExitCode, res.Stdout, res.Stderr = ins.ExitCode, stdout.Bytes(), stderr.Bytes()
	if stdout.Dropped() || stderr.Dropped() {
		return res, fmt.Errorf("exec in %s: %w at %d bytes per stream", name, ErrOutputTruncated, MaxExecOutput)
	}
	return res, nil
}

// execInspect reads an exec's state on a fresh short context: it runs after ctx may be done.
func (b *Backend) execInspect(execID string) (client.ExecInspectResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return b.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
}

// killExec ends an exec's process. The Engine API has no "kill exec" call, so: when the engine is
// local and the process is visible in our /proc (and really belongs to the container, guarding
// against PID reuse) it is signalled directly; failing that (no permission), `kill -KILL <pid>`
// runs inside the container as root with the PID from the namespace's view (NSpid). A remote
// engine whose processes we cannot see gets an error saying the process may still run.
func (b *Backend) killExec(execID, containerID string) error {
	ins, err := b.execInspect(execID)
	// Attach has asked the engine to start the process. No PID yet means it is still starting
	// (the engine reports Running before the process exists; a finished exec keeps its PID):
	// looking away now would let it start after the cancel and outlive it, so wait (bounded).
	for deadline := time.Now().Add(execStartWait); err == nil && ins.PID == 0; {
		if time.Now().After(deadline) {
			return fmt.Errorf("the process had not started after %s; it may still start", execStartWait)
		}
		time.Sleep(20 * time.Millisecond)
		ins, err = b.execInspect(execID)
	}
	if err != nil {
		return err
	}
	if !ins.Running {
		return nil
	}
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", ins.PID))
	if err != nil || !bytes.Contains(cg, []byte(containerID)) {
		return fmt.Errorf("process (host pid %d) is not visible from here (remote engine?); it may still run", ins.PID)
	}
	if err := syscall.Kill(ins.PID, syscall.SIGKILL); err == nil {
		return b.waitExecEnd(execID)
	}
	nspid, err := namespacePID(ins.PID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := b.cli.ExecCreate(ctx, containerID, client.ExecCreateOptions{User: "0", Cmd: []string{"kill", "-KILL", strconv.Itoa(nspid)}})
	if err != nil {
		return err
	}
	if _, err := b.cli.ExecStart(ctx, k.ID, client.ExecStartOptions{Detach: true}); err != nil {
		return err
	}
	return b.waitExecEnd(execID)
}

// execStartWait bounds how long killExec waits for an exec the engine is still starting.
const execStartWait = 10 * time.Second

// namespacePID reads the innermost PID of a host process from /proc/<pid>/status.
func namespacePID(hostPID int) (int, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", hostPID))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.Atoi(f[len(f)-1])
			}
		}
	}
	return 0, fmt.Errorf("no NSpid for host pid %d", hostPID)
}

// waitExecEnd waits (briefly) until the engine reports the exec finished.
func (b *Backend) waitExecEnd(execID string) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ins, err := b.execInspect(execID)
		if err != nil {
			return err
		}
		if !ins.Running {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("process still running 5s after SIGKILL")
}

package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.LogReader = (*Backend)(nil)

// Logs implements backends.LogReader from the engine's log stream: stdout and stderr are
// demultiplexed (a TTY member has one raw stream, reported as stdout), each line carries the
// engine's timestamp and the member's compose service. With no member every container of the
// sandbox is read at once and the lines interleave as they arrive.
func (b *Backend) Logs(ctx context.Context, sandboxID string, opts backends.LogOptions) (backends.LogStream, error) {
	var cs []container.Summary
	if opts.Member != "" {
		c, err := b.member(ctx, sandboxID, opts.Member)
		if err != nil {
			return nil, err
		}
		cs = []container.Summary{c}
	} else {
		project, err := b.ProjectOf(sandboxID)
		if err != nil {
			return nil, err
		}
		if cs, err = b.members(ctx, project); err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, fmt.Errorf("%w: %s has no containers", backends.ErrNotFound, sandboxID)
		}
	}
	lo := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: opts.Follow, Timestamps: true, Tail: "all"}
	if opts.Tail >= 0 {
		lo.Tail = strconv.Itoa(opts.Tail)
	}
	if !opts.Since.IsZero() {
		lo.Since = logsSince(opts.Since)
	}
	s := backends.NewChanStream(ctx)
	for _, c := range cs {
		ins, err := b.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil {
			s.Close()
			return nil, b.wrap(fmt.Errorf("logs of %s: %w", containerName(c), err))
		}
		tty := ins.Container.Config != nil && ins.Container.Config.Tty
		member := c.Labels[LabelService]
		if member == "" {
			member = containerName(c)
		}
		id, name := c.ID, containerName(c)
		s.Go(func(ctx context.Context) error {
			out := &backends.LineWriter{Send: s.Send, Member: member, Stream: backends.LogStdout, Stamped: true}
			errw := &backends.LineWriter{Send: s.Send, Member: member, Stream: backends.LogStderr, Stamped: true}
			o := lo
			for {
				err := b.copyLogs(ctx, id, name, o, tty, out, errw)
				if err != nil || !opts.Follow || ctx.Err() != nil {
					return err
				}
				// A followed stream can end while the member still runs (a log file rotated
				// under the engine's reader): read on from the last line seen.
				if ins, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err != nil ||
					ins.Container.State == nil || !ins.Container.State.Running {
					return nil
				}
				last := out.Last
				if errw.Last.After(last) {
					last = errw.Last
				}
				o.Tail, o.Since = "all", logsSince(last.Add(time.Nanosecond))
				if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
					return nil
				}
			}
		})
	}
	s.Start()
	return s, nil
}

// copyLogs reads one log stream of a container until it ends.
func (b *Backend) copyLogs(ctx context.Context, id, name string, lo client.ContainerLogsOptions, tty bool, out, errw *backends.LineWriter) error {
	rc, err := b.cli.ContainerLogs(ctx, id, lo)
	if err != nil {
		return b.wrap(fmt.Errorf("logs of %s: %w", name, err))
	}
	defer rc.Close()
	stop := context.AfterFunc(ctx, func() { rc.Close() }) // a blocked read ends with the stream
	defer stop()
	if tty {
		_, err = io.Copy(out, rc)
	} else {
		_, err = stdcopy.StdCopy(out, errw, rc)
	}
	out.Flush()
	errw.Flush()
	if err != nil && ctx.Err() == nil && err != io.ErrClosedPipe {
		return fmt.Errorf("logs of %s: %w", name, err)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// logsSince formats a time for the engine's since parameter (seconds.nanoseconds).
func logsSince(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10) + "." + fmt.Sprintf("%09d", t.Nanosecond())
}

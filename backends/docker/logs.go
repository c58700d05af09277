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
			rc, err := b.cli.ContainerLogs(ctx, id, lo)
			if err != nil {
				return b.wrap(fmt.Errorf("logs of %s: %w", name, err))
			}
			defer rc.Close()
			go func() { <-ctx.Done(); rc.Close() }() // a blocked read ends with the stream
			out := &backends.LineWriter{Send: s.Send, Member: member, Stream: backends.LogStdout, Stamped: true}
			errw := &backends.LineWriter{Send: s.Send, Member: member, Stream: backends.LogStderr, Stamped: true}
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
		})
	}
	s.Start()
	return s, nil
}

// logsSince formats a time for the engine's since parameter (seconds.nanoseconds).
func logsSince(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10) + "." + fmt.Sprintf("%09d", t.Nanosecond())
}

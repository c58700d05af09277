package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

func init() {
	registerCommand(func(f *factory) *cobra.Command { return newLogsCmd(f, nil) })
}

type logsOptions struct {
	Sandbox    string
	Member     string
	Follow     bool
	Since      string
	Tail       int
	Timestamps bool
	Output     string
	Previous   bool
	Raw        bool
}

func newLogsCmd(f *factory, runF func(context.Context, *logsOptions) error) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs <sandbox> [--member M] [-f] [--since 10m] [--tail N]",
		Short: "Print a sandbox's logs: every member interleaved (each line names it), or one member",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.Output, "text", "json"); err != nil {
				return err
			}
			if _, err := parseSince(o.Since, time.Now()); err != nil {
				return exitWith(2, err.Error())
			}
			o.Sandbox = args[0]
			return runOr(cmd, o, runF, func(ctx context.Context, o *logsOptions) error { return runLogs(ctx, f, o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Member, "member", "", "one member (service, container/pod name or ID); default: every member")
	fl.BoolVarP(&o.Follow, "follow", "f", false, "keep printing new lines until interrupted")
	fl.StringVar(&o.Since, "since", "", "only lines newer than a duration ago (10m) or a time (RFC 3339)")
	fl.IntVar(&o.Tail, "tail", -1, "start with the last N lines of each member (-1: all)")
	fl.BoolVarP(&o.Timestamps, "timestamps", "t", false, "prefix each line with its time")
	fl.BoolVarP(&o.Previous, "previous", "p", false, "Kubernetes: the previous container of a restarted member")
	fl.StringVarP(&o.Output, "output", "o", "text", "text or json (one object per line)")
	fl.BoolVar(&o.Raw, "raw", false, "print the members' bytes as they are, control sequences included (text output)")
	return cmd
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %s: want a positive duration", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (10m, 2h) or an RFC 3339 time", s)
}

func runLogs(ctx context.Context, f *factory, o *logsOptions) error {
	sup, err := f.ReadySupervisor(ctx, 10*time.Second)
	if err != nil {
		return err
	}
	sb, err := action.ResolveSandbox(sup.Fleet(), o.Sandbox)
	if err != nil {
		return exitWith(2, err.Error())
	}
	b, _, ok := sup.Lookup(sb.ID)
	if !ok {
		return fmt.Errorf("%w: %s", backends.ErrNotFound, sb.ID)
	}
	lr, ok := b.(backends.LogReader)
	if !ok {
		return exitWith(3, fmt.Sprintf("logs: not available from %s", b.Kind()))
	}
	since, _ := parseSince(o.Since, time.Now())
	s, err := lr.Logs(ctx, sb.ID, backends.LogOptions{Member: o.Member, Follow: o.Follow, Since: since, Tail: o.Tail, Previous: o.Previous})
	if err != nil {
		if errors.Is(err, backends.ErrNotFound) {
			return exitWith(2, err.Error())
		}
		return err
	}
	defer s.Close()
	return printLogs(f.Out, s, o, f.StdoutTTY() && o.Output == "text")
}

// printLogs writes lines as they come: "member | text" (stderr "member!| text"), the member
// coloured on a terminal, or one JSON object a line.
func printLogs(w io.Writer, s backends.LogStream, o *logsOptions, colour bool) error {
	colours := map[string]int{}
	width := 0
	for {
		l, err := s.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return err
		}
		if o.Output == "json" {
			if err := writeJSONLine(w, l); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		if o.Timestamps {
			b.WriteString(l.Time.UTC().Format(time.RFC3339Nano) + " ")
		}
		if o.Member == "" {
			width = max(width, len(l.Member))
			name := fmt.Sprintf("%-*s", width, l.Member)
			if colour {
				i, seen := colours[l.Member]
				if !seen {
					i = len(colours) % 6
					colours[l.Member] = i
				}
				name = fmt.Sprintf("\x1b[3%dm%s\x1b[0m", 6-i, name)
			}
			b.WriteString(name)
			if l.Stream == backends.LogStderr {
				b.WriteString("!| ")
			} else {
				b.WriteString(" | ")
			}
		}
		if o.Raw {
			b.WriteString(l.Text)
		} else {
			b.WriteString(redact.Terminal(l.Text))
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
}

func writeJSONLine(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

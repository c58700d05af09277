package proxmox

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.LogReader = (*Backend)(nil)

// logPoll is how often a followed Proxmox log looks for new tasks.
var logPoll = 2 * time.Second

// Logs implements backends.LogReader for VMs, which have no container log: each VM's PVE tasks
// (start, stop, snapshot, rollback… with every line of their task logs, stream "task"), then the
// guest's journal tail through the guest agent (stream "journal") — or one line saying why it
// could not be read. Following polls for new tasks.
func (b *Backend) Logs(ctx context.Context, sandboxID string, opts backends.LogOptions) (backends.LogStream, error) {
	_, refs, err := b.resolve(ctx, sandboxID, false)
	if err != nil {
		return nil, err
	}
	if opts.Member != "" {
		r, err := pickMember(refs, opts.Member)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", backends.ErrNotFound, sandboxID, err)
		}
		refs = []vmRef{r}
	}
	s := backends.NewChanStream(ctx)
	for _, r := range refs {
		s.Go(func(ctx context.Context) error {
			seen := map[string]bool{}
			since := opts.Since
			if err := b.taskLines(ctx, s, r, since, opts.Tail, seen); err != nil {
				return err
			}
			b.journalLines(ctx, s, sandboxID, r, opts.Tail)
			for opts.Follow {
				if err := sleep(ctx, logPoll); err != nil {
					return nil
				}
				if err := b.taskLines(ctx, s, r, since, -1, seen); err != nil {
					return err
				}
			}
			return nil
		})
	}
	s.Start()
	return s, nil
}

// taskLines sends the log of each task of r not seen yet, oldest first.
func (b *Backend) taskLines(ctx context.Context, s *backends.ChanStream, r vmRef, since time.Time, tail int, seen map[string]bool) error {
	path := fmt.Sprintf("/nodes/%s/tasks?vmid=%d&limit=500&source=all", url.PathEscape(r.node), r.vmid)
	if !since.IsZero() {
		path += "&since=" + strconv.FormatInt(since.Unix(), 10)
	}
	var tasks []map[string]any
	if err := b.get(ctx, path, &tasks); err != nil {
		return fmt.Errorf("tasks of %s: %s", vmLabel(r), apiMessage(err))
	}
	var lines []backends.LogLine
	for i := len(tasks) - 1; i >= 0; i-- { // PVE lists newest first
		t := tasks[i]
		upid, _ := t["upid"].(string)
		status, _ := t["status"].(string)
		if upid == "" || seen[upid] || status == "RUNNING" || status == "" {
			continue // a running task is read once it ended
		}
		seen[upid] = true
		start := time.Unix(int64(num(t["starttime"])), 0)
		typ, _ := t["type"].(string)
		user, _ := t["user"].(string)
		var log []map[string]any
		if err := b.get(ctx, fmt.Sprintf("/nodes/%s/tasks/%s/log?start=0&limit=1000", url.PathEscape(r.node), url.PathEscape(upid)), &log); err != nil {
			lines = append(lines, backends.LogLine{Time: start, Member: r.name, Stream: backends.LogTask, Text: fmt.Sprintf("%s by %s: %s (log unreadable: %s)", typ, user, status, apiMessage(err))})
			continue
		}
		lines = append(lines, backends.LogLine{Time: start, Member: r.name, Stream: backends.LogTask, Text: fmt.Sprintf("task %s by %s: %s", typ, user, status)})
		for _, l := range log {
			if text, _ := l["t"].(string); text != "" {
				lines = append(lines, backends.LogLine{Time: start, Member: r.name, Stream: backends.LogTask, Text: "  " + text})
			}
		}
	}
	if tail >= 0 && len(lines) > tail {
		lines = lines[len(lines)-tail:]
	}
	for _, l := range lines {
		if !s.Send(l) {
			return nil
		}
	}
	return nil
}

// journalLines sends the guest's journal tail, or one line with the reason it is not there.
func (b *Backend) journalLines(ctx context.Context, s *backends.ChanStream, sandboxID string, r vmRef, tail int) {
	n := tail
	if n < 0 || n > 1000 {
		n = 1000
	}
	reason := func(why string) {
		s.Send(backends.LogLine{Time: time.Now(), Member: r.name, Stream: backends.LogSystem, Text: "guest journal unavailable: " + why})
	}
	_, vm, err := b.guest(ctx, sandboxID, strconv.Itoa(r.vmid))
	if err != nil {
		reason(err.Error())
		return
	}
	actx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res, err := b.run(actx, r, vm, []string{"journalctl", "--no-pager", "-o", "short-iso", "-n", strconv.Itoa(n)}, "", 15*time.Second)
	switch {
	case err != nil:
		reason("the guest agent did not answer: " + err.Error())
		return
	case res.TimedOut:
		reason("journalctl did not finish in 15s")
		return
	case res.ExitCode != 0:
		reason(fmt.Sprintf("journalctl exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr))))
		return
	}
	for _, l := range strings.Split(strings.TrimRight(string(res.Stdout), "\n"), "\n") {
		if l == "" {
			continue
		}
		t := time.Now()
		if sp := strings.IndexByte(l, ' '); sp > 0 {
			if pt, err := time.Parse("2006-01-02T15:04:05-0700", l[:sp]); err == nil {
				t, l = pt, l[sp+1:]
			}
		}
		if !s.Send(backends.LogLine{Time: t, Member: r.name, Stream: backends.LogSystem, Text: l}) {
			return
		}
	}
}

func num(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case string:
		f, _ := strconv.ParseFloat(n, 64)
		return f
	}
	return 0
}

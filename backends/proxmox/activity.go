package proxmox

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// taskWatch turns finished PVE tasks on the sandboxes' VMs into Activity (the timeline's):
// each refresh reads the cluster's recent tasks once and reports the ones not reported before.
type taskWatch struct {
	seen  map[string]bool
	since time.Time // tasks that started before the watch began are history, not news
}

func newTaskWatch(now time.Time) *taskWatch {
	return &taskWatch{seen: map[string]bool{}, since: now.Add(-time.Minute)}
}

// poll emits one ActTask per new finished task on a member VM of sbs.
func (w *taskWatch) poll(ctx context.Context, b *Backend, sbs []backends.Sandbox, emit func(backends.Event)) {
	owner := map[string][2]string{} // vmid → sandbox ID, member name
	for _, sb := range sbs {
		for _, m := range sb.Members {
			owner[m.ID] = [2]string{sb.ID, m.Name}
		}
	}
	var tasks []map[string]any
	if err := b.get(ctx, "/cluster/tasks", &tasks); err != nil {
		return // best effort: the next refresh tries again
	}
	for i := len(tasks) - 1; i >= 0; i-- { // oldest first
		t := tasks[i]
		upid, _ := t["upid"].(string)
		status, _ := t["status"].(string)
		if upid == "" || status == "" || w.seen[upid] {
			continue // running tasks are reported once they end
		}
		start := time.Unix(int64(num(t["starttime"])), 0)
		if start.Before(w.since) {
			w.seen[upid] = true
			continue
		}
		id := fmt.Sprint(t["id"])
		o, ok := owner[id]
		if !ok {
			continue // not (yet) a member of a sandbox; looked at again next time
		}
		w.seen[upid] = true
		typ, _ := t["type"].(string)
		user, _ := t["user"].(string)
		end := start
		if e := num(t["endtime"]); e > 0 {
			end = time.Unix(int64(e), 0)
		}
		emit(backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: end, SandboxID: o[0], Member: o[1],
			Kind: sandbox.ActTask, Actor: user, Detail: fmt.Sprintf("task %s: %s", typ, status),
			Attrs: map[string]string{"type": typ, "status": status, "upid": upid, "vmid": id, "started": strconv.FormatInt(start.Unix(), 10)}}})
	}
}

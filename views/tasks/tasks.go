// Package tasks is the task panel: running and recent actions from the action layer, with their
// elapsed time and outcome. It only renders what it is given.
package tasks

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// View renders tasks (newest first) in w×h.
func View(th theme.Theme, ts []action.Task, w, h int, now time.Time) string {
	running := 0
	for _, t := range ts {
		if t.Status == action.TaskRunning {
			running++
		}
	}
	lines := []string{th.Title.Render(ansi.Truncate(fmt.Sprintf("tasks  (%d running, %d recent)", running, len(ts)-running), w, "~")),
		th.Header.Render(ansi.Truncate("   ID ACTION    STATUS     ELAPSED  TARGET", w, "~"))}
	if len(ts) == 0 {
		lines = append(lines, th.Dim.Render("no actions yet this session"))
	}
	for _, t := range ts {
		if len(lines) >= h-1 {
			break
		}
		end := t.Ended
		if end.IsZero() {
			end = now
		}
		el := end.Sub(t.Started).Round(time.Second)
		if el < 0 {
			el = 0
		}
		l := fmt.Sprintf("%5d %-9s %-10s %7s  %s", t.ID, t.Action, t.Status, el, t.Target)
		if t.Err != "" {
			l += "  " + strings.ReplaceAll(t.Err, "\n", " ")
		}
		l = ansi.Truncate(l, w, "~")
		switch t.Status {
		case action.TaskRunning:
			l = th.Warn.Render(l)
		case "failed", "refused":
			l = th.Err.Render(l)
		case "ok":
			l = th.OK.Render(l)
		}
		lines = append(lines, l)
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:h-1], th.Dim.Render(ansi.Truncate("x cancel the selected sandbox's action  esc back", w, "~")))
	return strings.Join(lines, "\n")
}

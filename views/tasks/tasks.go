// Package tasks is the task panel: running and recent actions from the action layer, with who
// started them, their elapsed time and outcome. The task under the cursor is the selection, so
// the cancel binding acts on it.
package tasks

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Source lists the running and recent tasks, newest first (in memory: no I/O).
type Source func() []action.Task

// Model is the panel.
type Model struct {
	src    Source
	tasks  []action.Task
	cursor int
}

// New opens the panel over src.
func New(src Source) *Model {
	m := &Model{src: src}
	m.reload()
	return m
}

func (m *Model) reload() {
	if m.src != nil {
		m.tasks = m.src()
	}
	m.cursor = max(0, min(m.cursor, len(m.tasks)-1))
}

// Bindings move the cursor; cancel and back are the program's.
func (m *Model) Bindings() []keymap.Name { return screen.Nav }

// Selection is the sandbox of the task under the cursor.
func (m *Model) Selection() keymap.Selection {
	if m.cursor < len(m.tasks) {
		return keymap.Selection{Sandbox: m.tasks[m.cursor].Target, Item: fmt.Sprint(m.tasks[m.cursor].ID)}
	}
	return keymap.Selection{}
}

// Refresh re-reads the tasks after an action ended.
func (m *Model) Refresh(*screen.Context) tea.Cmd { m.reload(); return nil }

// Update follows the clock and moves the cursor.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case screen.Tick:
		m.reload()
	case tea.KeyPressMsg:
		m.cursor = screen.Move(c.Keys, msg, m.cursor, max(1, c.Height-4), len(m.tasks)-1)
	}
	return nil
}

// View renders the tasks (newest first).
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	ts := m.tasks
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
	for i, t := range ts {
		if len(lines) >= h-2 {
			break
		}
		end := t.Ended
		if end.IsZero() {
			end = c.Now
		}
		el := max(end.Sub(t.Started).Round(time.Second), 0)
		l := fmt.Sprintf("%5d %-9s %-10s %7s  %s", t.ID, t.Action, t.Status, el, t.Target)
		if t.By.Operator != "" && t.By.Transport != action.TransportStandalone {
			l += "  by " + t.By.Operator // who, once more than one operator can act
		}
		if t.Status == action.TaskRunning && t.Step != "" {
			l += "  · " + strings.ReplaceAll(t.Step, "\n", " ")
		}
		if t.Err != "" {
			l += "  " + strings.ReplaceAll(t.Err, "\n", " ")
		}
		l = ansi.Truncate(l, w, "~")
		switch {
		case i == m.cursor:
			l = th.Selected.Render(l)
		case t.Status == action.TaskRunning:
			l = th.Warn.Render(l)
		case t.Status == "failed", t.Status == "refused":
			l = th.Err.Render(l)
		case t.Status == "ok":
			l = th.OK.Render(l)
		}
		lines = append(lines, l)
	}
	for len(lines) < h-2 {
		lines = append(lines, "")
	}
	km := c.Keys
	lines = append(lines[:h-2], c.StatusLine(), th.Dim.Render(ansi.Truncate(screen.Hints(km.Labels(keymap.Down, keymap.Up)+" select",
		c.Hint(keymap.Cancel, "cancel the selected task's action"), c.Hint(keymap.Back)), w, "~")))
	return strings.Join(lines, "\n")
}

package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// probeScreen is a screen that records its life on the stack.
type probeScreen struct {
	opened, closed int
	keys           []string
}

func (p *probeScreen) Open(*screen.Context) tea.Cmd { p.opened++; return nil }
func (p *probeScreen) Close()                       { p.closed++ }
func (p *probeScreen) Bindings() []keymap.Name      { return []keymap.Name{keymap.Down} }
func (p *probeScreen) View(c *screen.Context) string {
	return screen.Fit([]string{"probe screen", c.StatusLine()}, c.Width, c.Height)
}
func (p *probeScreen) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		p.keys = append(p.keys, k.String())
	}
	return nil
}

// overlay is a modal that writes over the first line.
type overlay struct{}

func (overlay) Bindings() []keymap.Name                     { return []keymap.Name{keymap.Back} }
func (overlay) View(c *screen.Context) string               { return "" }
func (overlay) Update(c *screen.Context, _ tea.Msg) tea.Cmd { c.Pop(); return nil }
func (overlay) Compose(below string, _ *screen.Context) string {
	lines := strings.Split(below, "\n")
	lines[0] = "OVERLAY"
	return strings.Join(lines, "\n")
}

func TestStackOpensClosesAndRoutes(t *testing.T) {
	m := New(Options{NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	p := &probeScreen{}
	m.push(p)
	if p.opened != 1 || m.top() != p {
		t.Fatalf("push: opened %d, top %T", p.opened, m.top())
	}
	// The screen's own binding reaches it; a global one does not.
	m.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	m.Update(tea.KeyPressMsg{Code: 'z', Text: "z"}) // unbound: still the screen's
	if strings.Join(p.keys, ",") != "j,z" {
		t.Errorf("keys reaching the screen = %v", p.keys)
	}
	// A screen of the same kind replaces it instead of stacking.
	q := &probeScreen{}
	m.push(q)
	if p.closed != 1 || len(m.stack) != 2 {
		t.Errorf("same-kind push: first closed %d, stack %d", p.closed, len(m.stack))
	}
	// A modal draws over the screen below and takes the next key.
	m.push(overlay{})
	if got := m.render(); !strings.HasPrefix(got, "OVERLAY") || len(strings.Split(got, "\n")) != 24 {
		t.Errorf("modal not composed over the screen below:\n%s", got)
	}
	m.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	if len(q.keys) != 0 || m.top() != q {
		t.Errorf("the modal did not take the key: screen got %v, top %T", q.keys, m.top())
	}
	// Back pops and closes; the fleet is never popped.
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if q.closed != 1 || len(m.stack) != 1 || m.top() != m.fleet {
		t.Errorf("back: closed %d, stack %d", q.closed, len(m.stack))
	}
}

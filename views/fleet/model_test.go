package fleet

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func health(backend string, st supervisor.State, err error) supervisor.Update {
	h := supervisor.Health{Backend: backend, State: st}
	if err != nil {
		h.LastError = err.Error()
	}
	return supervisor.Update{Backend: backend, Health: &h}
}

func TestCachedRowsAreStaleUntilTheBackendAnswers(t *testing.T) {
	m := New(keymap.Default(), theme.Plain())
	m.Now = func() time.Time { return t0 }
	m.SetSize(100, 20)
	m.LoadCached("docker:a", []*Row{NewRow("docker:a", sb("docker:a", 1), true)})
	if r := m.Selected(); r == nil || !r.Stale {
		t.Fatalf("cached row = %+v; want stale", r)
	}
	if !strings.Contains(m.View(), "docker:a unreachable") {
		t.Errorf("stale row's reason not shown:\n%s", m.View())
	}
	m.ApplyUpdates([]supervisor.Update{health("docker:a", supervisor.StateConnected, nil),
		{Backend: "docker:a", Event: &backends.Event{Type: backends.EventReset, Sandboxes: []backends.Sandbox{sb("docker:a", 1), sb("docker:a", 2)}}}})
	if m.store.Len() != 2 || m.Selected().Stale {
		t.Fatalf("after connect: len=%d stale=%v", m.store.Len(), m.Selected().Stale)
	}
	m.ApplyUpdates([]supervisor.Update{health("docker:a", supervisor.StateReconnecting, errors.New("dial unix /x.sock: no such file"))})
	if !m.Selected().Stale {
		t.Fatal("rows of a lost backend are not greyed")
	}
	out := m.View()
	if !strings.Contains(out, "reconnecting: dial unix /x.sock") {
		t.Errorf("health line lacks the reason:\n%s", out)
	}
}

func TestFilterIsDebouncedAndComputedOffTheUpdate(t *testing.T) {
	m := New(keymap.Default(), theme.Plain())
	m.SetSize(100, 20)
	for i := 0; i < 40; i++ {
		m.store.Put(NewRow("docker:a", sb("docker:a", i), false))
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	var cmd tea.Cmd
	for _, r := range "pwn" {
		m, cmd = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if m.store.Len() != 40 {
		t.Fatal("filter applied synchronously inside Update")
	}
	// Only the newest debounce tick computes; an older one is ignored.
	m, stale := m.Update(filterTickMsg{gen: m.gen - 1})
	if stale != nil {
		t.Fatal("a superseded debounce tick started a computation")
	}
	tick := cmd().(filterTickMsg)
	m, compute := m.Update(tick)
	if compute == nil {
		t.Fatal("no computation scheduled after the debounce")
	}
	m, _ = m.Update(compute())
	if m.store.Len() != 10 {
		t.Fatalf("after filter 'pwn': %d rows, want 10", m.store.Len())
	}
}

// A sandbox whose findings are still arriving shows its severity as a lower bound ("…"); the
// complete posture that follows drops the mark.
func TestPendingPostureIsMarkedInTheSeverityColumn(t *testing.T) {
	m := New(keymap.Default(), theme.Plain())
	m.Now = func() time.Time { return t0 }
	m.SetSize(100, 10)
	pending := sb("k8s:a", 1)
	pending.PosturePending = "network posture: CiliumNetworkPolicies still loading"
	m.ApplyUpdates([]supervisor.Update{health("k8s:a", supervisor.StateConnected, nil),
		{Backend: "k8s:a", Event: &backends.Event{Type: backends.EventReset, Sandboxes: []backends.Sandbox{pending}}}})
	if out := m.View(); !strings.Contains(out, "-…") {
		t.Fatalf("pending posture not marked:\n%s", out)
	}
	m.ApplyUpdates([]supervisor.Update{{Backend: "k8s:a", Event: &backends.Event{Type: backends.EventReset, Sandboxes: []backends.Sandbox{sb("k8s:a", 1)}}}})
	if out := m.View(); strings.Contains(out, "…") {
		t.Fatalf("complete posture still marked pending:\n%s", out)
	}
}

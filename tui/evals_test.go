package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	sbx "github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// pod is a Kubernetes sandbox whose pod label names its sample's uuid.
func pod(name, uuid string) backends.Sandbox {
	return backends.Sandbox{ID: "k8s:test/default/" + name, Name: name, Backend: backends.KindKubernetes, Status: backends.StatusRunning,
		Labels: map[string]string{"inspectSampleUUID": uuid}, Actionable: true, Created: t0.Add(-time.Minute)}
}

func linkOf(m *Model, id string) *fleet.EvalLink {
	r, ok := m.fleet.Store().Get(id)
	if !ok {
		return nil
	}
	return r.Eval
}

// A change the poller publishes wakes the workbench once; Update hands the rows to a command and
// links nothing itself (the links read are the snapshot at the command's run, not at Update's);
// the refresh is installed once, and the next wait sleeps until the next change.
func TestChangedWakeIsOneRefreshComputedInACommand(t *testing.T) {
	old := EvalsCoalesce
	EvalsCoalesce = time.Millisecond
	t.Cleanup(func() { EvalsCoalesce = old })
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	ew.poll()
	m := New(Options{Evals: ew.w, Now: func() time.Time { return t0 }})
	t.Cleanup(m.cancel)
	m.update(tea.WindowSizeMsg{Width: 120, Height: 20})
	a, b := pod("agent-env-a", "u42"), pod("agent-env-b", "u7")
	m.fleet.Store().Put(fleet.NewRow("k8s:test", a, false))
	m.fleet.Store().Put(fleet.NewRow("k8s:test", b, false))

	_, cmd := m.update(evalsWakeMsg{})
	if cmd == nil || linkOf(m, a.ID) != nil {
		t.Fatal("Update linked the rows itself or started no command")
	}
	ew.sample("7", 2, "u7") // published after Update, before the command runs
	ew.poll()
	msg, ok := cmd().(linksMsg)
	if !ok {
		t.Fatalf("the command returned %T", msg)
	}
	if linkOf(m, a.ID) != nil {
		t.Fatal("the rows changed before the refresh was installed")
	}
	m.update(msg)
	if l := linkOf(m, b.ID); l == nil || l.Sample() != "7/2" || l.How != "exact" || m.evals.refreshes != 1 {
		t.Fatalf("after the refresh: %+v, %d refreshes (want the sample published after Update, once)", l, m.evals.refreshes)
	}
	if !strings.Contains(m.Fleet().View(), "=42/1") {
		t.Errorf("the SAMPLE column is not shown:\n%s", m.Fleet().View())
	}

	// The next wait sleeps while nothing changes, and one change wakes it once.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wakes := make(chan tea.Msg, 4)
	go func() { wakes <- waitEvals(ctx, ew.w, m.evals.poke, msg.version)() }()
	select {
	case w := <-wakes:
		t.Fatalf("woke with nothing changed: %T", w)
	case <-time.After(200 * time.Millisecond):
	}
	ew.event("42", 1, it.SandboxExec(3, "ls", 0, ""))
	ew.poll()
	select {
	case w := <-wakes:
		if _, ok := w.(evalsWakeMsg); !ok {
			t.Fatalf("woke with %T", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a published change did not wake the workbench")
	}
	// An agent's command is progress only: the links stand (until EvalsRelinkEvery).
	m.update(evalsWakeMsg{})
	if m.evals.refreshes != 1 {
		t.Fatalf("%d refreshes after a wake for progress only; want the links to stand", m.evals.refreshes)
	}
	// A new sample is what links depend on: its wake relinks.
	ew.sample("43", 1, "u43")
	ew.poll()
	_, cmd = m.update(evalsWakeMsg{})
	m.update(cmd())
	if m.evals.refreshes != 2 {
		t.Fatalf("%d refreshes after a new sample's wake", m.evals.refreshes)
	}
	go func() { wakes <- waitEvals(ctx, ew.w, m.evals.poke, ew.w.Version())() }()
	select {
	case w := <-wakes:
		t.Fatalf("a second wake for one change: %T", w)
	case <-time.After(200 * time.Millisecond):
	}
}

// A fleet update pokes the refresher: a sandbox appearing gets its link though the poller did
// not change.
func TestFleetUpdatePokesTheRefresher(t *testing.T) {
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	ew.poll()
	m := New(Options{Evals: ew.w, Now: func() time.Time { return t0 }})
	t.Cleanup(m.cancel)
	done := make(chan tea.Msg, 1)
	go func() { done <- waitEvals(m.ctx, ew.w, m.evals.poke, ew.w.Version())() }()
	m.update(fleet.Prepare(nil))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a fleet update did not wake the refresher")
	}
}

// An exec alert names the agent's command when the exec's program and time match: the closest
// completed exec, or the tool call in flight; never a command of another time or program.
func TestExecAlertNamesTheAgentsCall(t *testing.T) {
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	ew.event("42", 1, it.SandboxExec(5, "bash --login -c 'nmap -sV 10.0.0.5'", 0, "open ports"))
	ew.event("42", 1, it.SandboxExec(9, "bash --login -c 'id'", 0, "uid=0"))
	ew.event("42", 1, it.ToolCall("call-1", 20, "cat /flag", true, ""))
	ew.poll()
	sb := pod("agent-env-a", "u42")
	links := map[string]inspectlive.Link{sb.ID: ew.w.Link(sb)}
	exec := func(id uint64, sec float64, sandbox, prog string) state.Alert {
		at := t0.Add(time.Duration(sec * float64(time.Second)))
		return state.Alert{ID: id, Time: at, SandboxID: sandbox, Kind: state.AlertExec, Summary: "exec " + prog,
			Event: &sbx.Activity{Time: at, Kind: sbx.ActExec, Attrs: map[string]string{"command": prog}}}
	}
	names := nameAlerts(ew.w, links, []state.Alert{
		exec(1, 5.3, sb.ID, "timeout"), // Inspect's docker exec wrapper: the closest command
		exec(2, 8.2, sb.ID, "bash"),    // bash: the id at 9 s is closer than nmap at 5 s
		exec(3, 20.4, sb.ID, "bash"),   // the tool call in flight
		exec(4, 60, sb.ID, "timeout"),  // no command near it
		exec(5, 5, sb.ID, "python3"),   // no python3 command
		exec(6, 5, "k8s:test/default/other", "timeout"),
		{ID: 7, Time: t0.Add(5 * time.Second), SandboxID: sb.ID, Kind: "posture", Summary: "weakened"},
	})
	want := map[uint64]string{
		1: `agent's exec "nmap -sV 10.0.0.5" (ran, sample 42/1)`,
		2: `agent's exec "id" (ran, sample 42/1)`,
		3: `agent's bash "cat /flag" (in flight, sample 42/1)`,
	}
	if len(names) != len(want) {
		t.Errorf("named %d alerts, want %d: %v", len(names), len(want), names)
	}
	for id, w := range want {
		if names[id] != w {
			t.Errorf("alert %d: %q, want %q", id, names[id], w)
		}
	}

	// The alert line says so.
	m := New(Options{Evals: ew.w, Now: func() time.Time { return t0 }})
	t.Cleanup(m.cancel)
	m.watch.open = []state.Alert{exec(1, 5.3, sb.ID, "timeout")}
	m.evals.agent = names
	if line := m.alertLine(); !strings.Contains(line, `← agent's exec "nmap -sV 10.0.0.5"`) {
		t.Errorf("alert line: %q", line)
	}
}

// The timeline's merge gives the agent's commands (marked as the agent's) and the alerts.
func TestAgentAndAlertEntries(t *testing.T) {
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	ew.event("42", 1, it.SandboxExec(5, "bash --login -c 'nmap -sV 10.0.0.5'", 1, ""))
	ew.event("42", 1, it.ToolCall("call-2", 20, "cat /flag", true, ""))
	ew.poll()
	sb := pod("agent-env-a", "u42")
	es := agentEntries(ew.w, ew.w.Link(sb))
	if len(es) != 2 || es[0].Source != "agent" || es[0].Detail != "nmap -sV 10.0.0.5 → exit 1" || es[0].Actor != "agent (sample 42/1)" || es[0].Member != "sample 42/1" ||
		es[1].Kind != "tool" || !strings.Contains(es[1].Detail, "cat /flag (in flight)") || !es[0].Time.Before(es[1].Time) {
		t.Fatalf("agent entries: %+v", es)
	}
	al := alertEntries([]state.Alert{{ID: 3, Time: t0, Kind: state.AlertExec, Summary: "exec timeout"}}, map[uint64]string{3: "agent's exec \"id\""})
	if len(al) != 1 || al[0].Source != "alert" || !strings.Contains(al[0].Detail, `exec timeout ← agent's exec "id"`) {
		t.Fatalf("alert entries: %+v", al)
	}
}

// The program end to end: a pod labelled with a running sample's uuid shows its SAMPLE, filters
// by sample=, opens a detail with the sample panel (output on demand) and a timeline with the
// agent's commands; :orphans narrows to orphaned sandboxes (none here).
func TestProgramShowsTheLinkedSample(t *testing.T) {
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	ew.event("42", 1, it.SandboxExec(-30, "bash --login -c 'nmap -sV 10.0.0.5'", 0, "22/tcp open ssh"))
	ew.event("42", 1, it.ToolCall("call-3", -5, "cat /flag", true, ""))
	ew.poll()
	k := &fakeK8s{fakeBackend{name: "k8s:evals", kind: backends.KindKubernetes}}
	sb := sandbox("k8s:evals", backends.KindKubernetes, "agent-env-ev1", "cybench", 1, time.Minute)
	sb.Labels = map[string]string{"inspectSampleUUID": "u42"}
	k.fleet = []backends.Sandbox{sb}
	h := newHarness(t, harnessOpts{w: 140, h: 40, evals: ew.w, extra: []backends.Backend{k8sOnly{k}}})
	f := h.waitText("=42/1")
	if !strings.Contains(f, "EVAL") || !strings.Contains(rowOf(f, "agent-env-ev1"), "cybench") {
		t.Errorf("the linked row:\n%s", f)
	}
	h.key(":")
	h.typeText("filter sample=42")
	h.key("enter")
	h.waitText("1/5 sandboxes")
	h.key("enter")
	h.waitText("INSPECT SAMPLE  cybench  sample 42 epoch 1")
	h.waitText("in flight: bash cat /flag")
	h.key("enter")
	h.waitText("22/tcp open ssh")
	h.key("esc", ":")
	h.typeText("timeline")
	h.key("enter")
	f = h.waitText("nmap -sV 10.0.0.5 → exit 0")
	if !strings.Contains(f, "cat /flag (in flight)") {
		t.Errorf("the pending tool call is not in the timeline:\n%s", f)
	}
	h.key("esc", ":")
	h.typeText("orphans")
	h.key("enter")
	h.waitText("0/5 sandboxes")
}

// A long tool call in flight is condensed in the buffer: the sample panel's read (a command)
// expands it, without changing the poller's shared snapshot.
func TestSampleOfResolvesALongCallInFlight(t *testing.T) {
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	long := "python3 -c '" + strings.Repeat("x", 150) + "'"
	ew.db.AddAttachment(t, "42", 1, "h1", long)
	ew.event("42", 1, it.ToolCall("call-4", -5, "attachment://h1", true, ""))
	ew.poll()
	sb := pod("agent-env-a", "u42")
	d := sampleOf(ew.w, sb)
	if d.State.Pending == nil || d.State.Pending.Cmd != long {
		t.Fatalf("pending %+v", d.State.Pending)
	}
	if s, _ := ew.w.Sample(d.Link.Eval.Key, "42", 1); s.Pending.Cmd != "attachment://h1" {
		t.Errorf("the shared snapshot was modified: %q", s.Pending.Cmd)
	}
}

package tui

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// execsBackend is a Docker fake that remembers exec lines, as backends/docker does from its
// engine's exec_start events.
type execsBackend struct {
	*fakeBackend
	mu    sync.Mutex
	lines map[string][]string
}

func (e *execsBackend) RecentExecs(id string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines[id]...)
}

func (e *execsBackend) ran(id string, lines ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines[id] = append(e.lines[id], lines...)
}

// traceProject appends the trace line Inspect writes when it brings up a sample's compose
// project (a Subprocess record naming --project-name), to the trace of this process's eval.
func traceProject(t *testing.T, w *inspectlive.Watcher, project, task, sampleID string, epoch int) {
	t.Helper()
	evals := w.Evals()
	if len(evals) != 1 {
		t.Fatalf("want one eval, have %d", len(evals))
	}
	it.AppendTrace(t, it.TracePath(evals[0].DataDir, os.Getpid()), it.TraceSubprocess(-60, project, task, sampleID, epoch))
}

// A Docker row the trace links (How=trace) becomes How=matched once the supervisor's backend
// reports that the sandbox ran the sample's command; another sample's command does not. The
// lines are read in the refresh command and reach neither its message nor the screen.
func TestDockerRowMatchedByTheBackendsExecLines(t *testing.T) {
	ew := newEvalWorld(t)
	ew.sample("42", 1, "u42")
	ew.sample("43", 1, "u43")
	ew.event("42", 1, it.SandboxExec(-30, "bash --login -c 'cat /etc/passwd'", 0, ""))
	ew.event("43", 1, it.SandboxExec(-20, "bash --login -c 'id -u'", 0, ""))
	ew.poll()
	project := "inspect-cybench-itrace42"
	traceProject(t, ew.w, project, "cybench", "42", 1)
	ew.poll()

	d := &execsBackend{fakeBackend: &fakeBackend{name: "docker:test", kind: backends.KindDocker}, lines: map[string][]string{}}
	sb := sandbox("docker:test", backends.KindDocker, project, "cybench", 1, time.Minute)
	d.fleet = []backends.Sandbox{sb}
	sup := supervisor.New([]backends.Backend{d}, supervisor.Backoff{})
	// The exec lines are read at the periodic relink (EvalsRelinkEvery): each refresh below
	// comes one period after the last.
	clock := t0
	m := New(Options{Evals: ew.w, Supervisor: sup, Now: func() time.Time { return clock }})
	t.Cleanup(m.cancel)
	m.update(tea.WindowSizeMsg{Width: 160, Height: 20})
	m.fleet.Store().Put(fleet.NewRow("docker:test", sb, false))

	refresh := func() (*fleet.EvalLink, linksMsg) {
		t.Helper()
		clock = clock.Add(EvalsRelinkEvery)
		_, cmd := m.update(evalsWakeMsg{})
		if cmd == nil {
			t.Fatal("no refresh command")
		}
		msg, ok := cmd().(linksMsg)
		if !ok {
			t.Fatalf("the command returned %T", msg)
		}
		m.update(msg)
		return linkOf(m, sb.ID), msg
	}
	if l, _ := refresh(); l == nil || l.How != string(inspectlive.HowTrace) || l.Sample() != "42/1" {
		t.Fatalf("before any exec: %+v; want 42/1 by trace", l)
	}
	d.ran(sb.ID, "timeout -k 5s 180s bash --login -c id -u")
	if l, _ := refresh(); l == nil || l.How != string(inspectlive.HowTrace) {
		t.Fatalf("another sample's command changed the link: %+v", l)
	}
	d.ran(sb.ID, "timeout -k 5s 180s bash --login -c cat /etc/passwd")
	l, msg := refresh()
	if l == nil || l.How != string(inspectlive.HowMatched) || l.Sample() != "42/1" {
		t.Fatalf("after the sample's command: %+v; want 42/1 matched", l)
	}
	if s := fmt.Sprintf("%+v", msg); strings.Contains(s, "timeout -k") {
		t.Errorf("the refresh message carries the exec lines: %s", s)
	}
	if v := m.Fleet().View(); strings.Contains(v, "timeout -k") || !strings.Contains(v, "42/1") {
		t.Errorf("the table shows the exec lines, or not the sample:\n%s", v)
	}
	// The detail's sample panel links as the table does.
	if d := sampleOf(ew.w, sb, recentExecs(m.execLines(), sb)...); d.Link.How != inspectlive.HowMatched {
		t.Errorf("the sample panel's link: %+v", d.Link)
	}
}

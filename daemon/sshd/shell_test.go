package sshd_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/state"
)

// TestShellInASession: an operator over SSH opens a shell into the sandbox from the session's
// workbench (E) and the terminal is the shell's: the first key typed reaches it (the whole
// command line echoes and runs), a window change reaches it (stty size), and once it exits the
// workbench takes the very next key. The journal has the shell's start and end with the
// operator's SSH identity.
func TestShellInASession(t *testing.T) {
	r := newRig(t, "shell")
	a := r.session(t, "alice")

	m := a.mark()
	a.key("E")
	a.wait(m, "/ #", 30*time.Second)
	m = a.mark()
	a.key("echo hello-$((6*7))\r")
	a.wait(m, "echo hello-$((6*7))", 10*time.Second) // the first key was not lost
	a.wait(m, "hello-42", 10*time.Second)

	// Output the workbench's frames would drop for a slow client arrives whole and in order.
	m = a.mark()
	a.key("seq 10000 19999\r")
	var all strings.Builder
	for i := 10000; i <= 19999; i++ {
		all.WriteString(strconv.Itoa(i))
	}
	a.wait(m, all.String()+"/ #", 20*time.Second)

	m = a.mark()
	a.key("stty size\r")
	a.wait(m, "40 200", 10*time.Second)
	if err := a.sess.WindowChange(31, 97); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	m = a.mark()
	a.key("stty size\r")
	a.wait(m, "31 97", 10*time.Second)

	m = a.mark()
	a.key("exit\r")
	a.wait(m, "exited 0", 20*time.Second)
	m = a.mark()
	a.key("?")                                 // the workbench's next key: its help
	a.wait(m, "ctrl+l redraw", 10*time.Second) // a line of the help screen alone

	alice := r.identity(t, "alice")
	es, err := r.db.Journal(state.JournalQuery{Target: r.id})
	if err != nil {
		t.Fatal(err)
	}
	var intent, outcome *state.Entry
	for i, e := range es {
		if e.Action != "shell" {
			continue
		}
		for _, v := range e.Params {
			if strings.Contains(v, "hello") || strings.Contains(v, "stty") {
				t.Errorf("keystrokes in the journal: %+v", e)
			}
		}
		if e.Phase == state.PhaseIntent {
			intent = &es[i]
		} else if e.Phase == state.PhaseOutcome {
			outcome = &es[i]
		}
	}
	if intent == nil || outcome == nil {
		t.Fatalf("the journal lacks the shell's start or end: %+v", es)
	}
	for _, e := range []*state.Entry{intent, outcome} {
		if e.Operator != "alice" || e.Transport != "ssh" || e.Fingerprint != alice.Fingerprint || e.Source != alice.Source {
			t.Errorf("shell entry without alice's SSH identity %+v: %+v", alice, e)
		}
	}
	if outcome.Outcome != state.OutcomeOK || outcome.Params["exit_code"] != "0" || outcome.Params["shell"] != "sh" {
		t.Errorf("shell outcome = %+v; want ok, exit code 0, sh", outcome)
	}
}

// TestViewerShellRefused: a viewer's session has no shell key, and `:shell` is refused by the
// layer for the role, journaled with the viewer's identity; no shell is opened.
func TestViewerShellRefused(t *testing.T) {
	r := newRig(t, "vshell")
	v := r.session(t, "vic")
	if s := v.text(0); strings.Contains(s, squeeze("E shell")) {
		t.Errorf("a viewer's footer offers the shell: %s", s[max(0, len(s)-400):])
	}
	m := v.mark()
	v.key(":")
	v.key("shell\r")
	v.wait(m, "vic is viewer", 10*time.Second)
	vic := r.identity(t, "vic")
	var refused *state.Entry
	for start := time.Now(); refused == nil; time.Sleep(100 * time.Millisecond) {
		es, err := r.db.Journal(state.JournalQuery{Target: r.id})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range es {
			if e.Action == "shell" && e.Phase == state.PhaseOutcome {
				refused = &es[i]
			}
		}
		if refused == nil && time.Since(start) > 10*time.Second {
			t.Fatalf("the viewer's shell is not journaled: %+v", es)
		}
	}
	if refused.Outcome != state.OutcomeRefused || refused.Operator != "vic" || refused.Fingerprint != vic.Fingerprint ||
		refused.Transport != "ssh" || !strings.Contains(refused.Error, "vic is viewer") {
		t.Errorf("viewer's shell journaled as %+v; want refused, naming vic's role, with vic's identity", refused)
	}
	if s := v.text(m); strings.Contains(s, "/ #") {
		t.Errorf("a shell prompt reached the viewer: %s", s[max(0, len(s)-400):])
	}
}

// TestShellEndsWithItsClient: an operator whose connection drops while a shell is open does not
// leave it running with nobody at the keyboard: the shell is ended, its end journaled, and the
// sandbox is free for the next action.
func TestShellEndsWithItsClient(t *testing.T) {
	r := newRig(t, "shelldrop")
	b := r.session(t, "bob")
	m := b.mark()
	b.key("E")
	b.wait(m, "/ #", 30*time.Second)
	if _, busy := r.d.Layer().Busy(r.id); !busy {
		t.Fatal("the sandbox is not held while its shell is open")
	}
	b.client.Close()
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		_, busy := r.d.Layer().Busy(r.id)
		if !busy && r.d.Hub().Count() == 0 {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("20 s after bob's connection dropped: sandbox held %v, sessions %d", busy, r.d.Hub().Count())
		}
	}
	es, err := r.db.Journal(state.JournalQuery{Target: r.id})
	if err != nil {
		t.Fatal(err)
	}
	var end *state.Entry
	for i, e := range es {
		if e.Action == "shell" && e.Phase == state.PhaseOutcome {
			end = &es[i]
		}
	}
	if end == nil || end.Operator != "bob" || end.Outcome == state.OutcomeOK {
		t.Errorf("the dropped shell's end journaled as %+v; want bob's shell, not ok", end)
	}
}

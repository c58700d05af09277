package cmdline

import (
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// verbs is the program's table as it was when these cases were written.
var verbs = []Verb{
	{"sandboxes", "sb", "fleet"}, {"docker"}, {"k8s", "kubernetes"}, {"pve", "proxmox"}, {"journal", "j"},
	{"snapshots", "snap"}, {"probes", "probe"}, {"specs", "spec", "author"}, {"tasks"}, {"sort"}, {"group"},
	{"filter"}, {"help"}, {"q", "quit"},
}

func TestParse(t *testing.T) {
	tests := []struct {
		in, verb, arg string
		err           bool
	}{
		{":sandboxes", "sandboxes", "", false},
		{"sb", "sandboxes", "", false},
		{"kubernetes", "k8s", "", false},
		{"proxmox", "pve", "", false},
		{":sort  age desc", "sort", "age desc", false},
		{"group task", "group", "task", false},
		{"quit", "q", "", false},
		{"Journal", "journal", "", false},
		{"", "", "", true},
		{"rm -rf", "", "", true},
	}
	for _, tc := range tests {
		c, err := Parse(tc.in, verbs)
		if (err != nil) != tc.err || c.Verb != tc.verb || c.Arg != tc.arg {
			t.Errorf("Parse(%q) = %+v, %v; want %s %q err=%v", tc.in, c, err, tc.verb, tc.arg, tc.err)
		}
	}
}

func press(m *Model, keys ...string) (string, bool) {
	var line string
	var done bool
	for _, k := range keys {
		msg := tuitest.Key(k)
		line, done = m.Key(keymap.Default(), msg)
	}
	return line, done
}

func TestHistory(t *testing.T) {
	var m Model
	for _, cmd := range []string{"k8s", "journal", "journal"} {
		m.Open()
		m.SetInput(cmd)
		if line, done := press(&m, "enter"); !done || line != cmd {
			t.Fatalf("submit %q = %q %v", cmd, line, done)
		}
	}
	if _, err := Parse("bogus", verbs); err == nil || !strings.Contains(err.Error(), ":sandboxes :docker") {
		t.Errorf("unknown verb error = %v; want the verbs there are", err)
	}
	if h := m.History(); len(h) != 2 {
		t.Fatalf("history %v: repeated commands must collapse", h)
	}
	m.Open()
	press(&m, "up")
	if m.Input() != "journal" {
		t.Errorf("up = %q, want journal", m.Input())
	}
	press(&m, "up", "up")
	if m.Input() != "k8s" {
		t.Errorf("up up up = %q, want k8s (the oldest, clamped)", m.Input())
	}
	press(&m, "down", "down")
	if m.Input() != "" {
		t.Errorf("down past the newest = %q, want the fresh empty line", m.Input())
	}
	if line, done := press(&m, "x", "esc"); !done || line != "" || m.Active {
		t.Errorf("esc = %q %v active=%v", line, done, m.Active)
	}
	for i := range MaxHistory + 10 {
		m.Open()
		m.SetInput(string(rune('a'+i%26)) + string(rune('a'+i/26)))
		press(&m, "enter")
	}
	if n := len(m.History()); n != MaxHistory {
		t.Errorf("history holds %d, want bounded at %d", n, MaxHistory)
	}
}

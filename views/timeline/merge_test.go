package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// The agent's commands and the alerts are merged with the recorded entries in one time order
// (a recorded entry first at equal times; the extra ones sorted even when read out of order),
// marked as the agent's, and filterable like the rest.
func TestMergeOrdersAgentCommandsAmongRecordedEntries(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 16, 0, 0, 0, time.Local)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	src := fakeSource{
		{Time: at(0), Source: state.SourceRangekeeper, Kind: "recording-start", Detail: "rangekeeper started recording"},
		{Time: at(5), Source: state.SourceBackend, Kind: "exec", Member: "ctf-default-1", Detail: "exec timeout as root (arguments not recorded)"},
		{Time: at(9), Source: state.SourceJournal, Kind: "snapshot", Actor: "op@host", Detail: "intent"},
	}
	extra := []state.TimelineEntry{
		{Time: at(12), Source: SourceAgent, Kind: "tool", Actor: "agent (sample 42/1)", Detail: "bash cat /flag (in flight)"},
		{Time: at(5), Source: SourceAgent, Kind: "exec", Actor: "agent (sample 42/1)", Detail: "nmap -sV 10.0.0.5 → exit 0"},
		{Time: at(5), Source: SourceAlert, Kind: "exec", Member: "ctf-default-1", Detail: "LOW exec timeout ← agent's exec \"nmap -sV 10.0.0.5\""},
		{Time: at(1), Source: SourceAgent, Kind: "exec", Actor: "agent (sample 42/1)", Detail: "id → exit 0"},
	}
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 120, Height: 14, Now: t0}
	m := New(src, "docker:default/ctf", "ctf")
	asked := ""
	m.SetMerge(func(id string) ([]state.TimelineEntry, error) { asked = id; return extra, nil })
	m.Update(c, m.Open(c)())
	var got []string
	for _, e := range m.Entries() {
		got = append(got, e.Source+"@"+e.Time.Sub(t0).String())
	}
	want := "rangekeeper@0s agent@1s backend@5s agent@5s alert@5s journal@9s agent@12s"
	if strings.Join(got, " ") != want || asked != "docker:default/ctf" {
		t.Fatalf("order %q (asked for %q), want %q", strings.Join(got, " "), asked, want)
	}
	goldentest.Assert(t, "timeline-merged", m.View(c))
	m.filter = "agent"
	m.apply()
	if n := len(m.Entries()); n != 4 { // the agent's three, and the alert naming the agent
		t.Errorf("filter agent: %d entries", n)
	}
}

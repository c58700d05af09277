package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

type fakeSource []state.TimelineEntry

func (f fakeSource) Timeline(q state.TimelineQuery) ([]state.TimelineEntry, error) {
	return append([]state.TimelineEntry(nil), f...), nil
}

// The screen loads in a command, shows the entries oldest first with the newest selected, and
// filters by every word across source, kind, member and detail; back clears the filter first.
func TestTimelineScreenFilters(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 16, 0, 0, 0, time.Local)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	src := fakeSource{
		{Time: at(0), Source: state.SourceRangekeeper, Kind: "recording-start", Detail: "rangekeeper started recording"},
		{Time: at(5), Source: state.SourceBackend, Kind: "oom", Member: "ctf-default-1", Detail: "killed: out of memory"},
		{Time: at(6), Source: state.SourceBackend, Kind: "die", Member: "ctf-default-1", Detail: "exited with code 137"},
		{Time: at(8), Source: state.SourceBackend, Kind: "start", Member: "ctf-default-1", Detail: "started"},
		{Time: at(9), Source: state.SourceJournal, Kind: "shell", Actor: "op@host", Detail: "intent"},
		{Time: at(12), Source: state.SourceBackend, Kind: "network-connect", Member: "ctf-web-1", Detail: "joined network egress"},
		{Time: at(20), Source: state.SourceRangekeeper, Kind: "gap", Detail: "recording stopped; nothing recorded for 5m0s until the next start"},
	}
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 100, Height: 14, Now: t0}
	m := New(src, "docker:default/ctf", "ctf")
	m.Update(c, m.Open(c)())
	goldentest.Assert(t, "timeline", m.View(c))
	if len(m.Entries()) != 7 || m.cursor != 6 {
		t.Fatalf("%d entries, cursor %d", len(m.Entries()), m.cursor)
	}
	for _, k := range []string{"/", "b", "a", "c", "k", "e", "n", "d", " ", "d", "e", "f", "enter"} {
		m.Update(c, tuitest.Key(k))
	}
	if got := m.Entries(); len(got) != 3 || got[0].Kind != "oom" || got[2].Kind != "start" {
		t.Errorf("filter 'backend def': %+v", got)
	}
	if v := m.View(c); !strings.Contains(v, `filter "backend def"`) || strings.Contains(v, "egress") {
		t.Errorf("filtered view:\n%s", v)
	}
	m.Update(c, tuitest.Key("esc"))
	if len(m.Entries()) != 7 {
		t.Errorf("back should clear the filter first")
	}
	m.Update(c, tuitest.Key("esc"))
	if ops := c.TakeOps(); len(ops) != 1 || ops[0].Push != nil {
		t.Errorf("back without a filter should pop: %+v", ops)
	}
}

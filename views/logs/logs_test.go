package logs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

var t0 = time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)

func ctxFor(w, h int) *screen.Context {
	return &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: w, Height: h, Now: t0}
}

// fixed is a source of the given lines that then ends.
func fixed(lines []backends.LogLine) Source {
	return func(ctx context.Context) (backends.LogStream, error) {
		s := backends.NewChanStream(ctx)
		s.Go(func(context.Context) error {
			for _, l := range lines {
				if !s.Send(l) {
					return nil
				}
			}
			return nil
		})
		s.Start()
		return s, nil
	}
}

// drive runs cmd like the program does (synchronously here) and feeds results back to m until
// no command is left; it returns the messages seen.
func drive(t testing.TB, m *Model, c *screen.Context, cmd tea.Cmd) {
	t.Helper()
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			return
		}
		cmd = m.Update(c, msg)
	}
}

func press(t testing.TB, m *Model, c *screen.Context, keys ...string) {
	t.Helper()
	for _, k := range keys {
		drive(t, m, c, m.Update(c, tuitest.Key(k)))
	}
}

func sampleLines() []backends.LogLine {
	var ls []backends.LogLine
	for i := range 40 {
		member, stream := "default", backends.LogStdout
		if i%3 == 1 {
			member = "web"
		}
		if i%5 == 4 {
			stream = backends.LogStderr
		}
		text := fmt.Sprintf("line %02d from %s", i, member)
		if i == 17 {
			text = "PLANTED needle " + strings.Repeat("long ", 30) + "\x1b]0;evil title\x07tail"
		}
		ls = append(ls, backends.LogLine{Time: t0.Add(time.Duration(i) * time.Second), Member: member, Stream: stream, Text: text})
	}
	return ls
}

// The screen shows the newest lines of every member with the member's name (stderr marked),
// keeps them in a ring of the configured size, searches, wraps, stamps and follows, and never
// passes a member's terminal escapes through.
func TestLogsScreen(t *testing.T) {
	c := ctxFor(80, 12)
	m := New(Options{Sandbox: "docker:test/inspect-x-iabcdef", Title: "logs inspect-x-iabcdef", Lines: 30, Source: fixed(sampleLines())})
	drive(t, m, c, m.Open(c))
	if m.ring.Len() != 30 || m.ring.Dropped()+m.dropped != 10 {
		t.Fatalf("ring: %d held, %d dropped; want 30 and 10", m.ring.Len(), m.ring.Dropped()+m.dropped)
	}
	tail := m.View(c)
	goldentest.Assert(t, "tail", tail)
	if !strings.Contains(tail, "line 39 from default") || strings.Contains(tail, "line 20 ") {
		t.Errorf("following: want the newest lines only:\n%s", tail)
	}
	if !strings.Contains(tail, "web     │ line 37") || !strings.Contains(tail, "default!│ line 39") {
		t.Errorf("members and stderr not marked:\n%s", tail)
	}

	press(t, m, c, "/", "p", "l", "a", "n", "t", "e", "d", "enter")
	found := m.View(c)
	if !m.matched || !strings.HasPrefix(m.ring.At(m.index(m.matchSeq)).Text, "PLANTED") || !strings.Contains(found, "PLANTED needle") {
		t.Fatalf("search did not bring the planted line into view:\n%s", found)
	}
	if strings.Contains(found, "\x1b]0;") || strings.Contains(found, "\x07") {
		t.Errorf("a member's escape sequence reached the screen: %q", found)
	}
	press(t, m, c, "w", "T")
	wrapped := m.View(c)
	goldentest.Assert(t, "wrapped", wrapped)
	if !strings.Contains(wrapped, "16:00:17.000") || !strings.Contains(wrapped, "tail") {
		t.Errorf("wrap + timestamps: want the whole planted line and its time:\n%s", wrapped)
	}
	for _, l := range strings.Split(wrapped, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("row wider than the screen: %q", l)
		}
	}
	press(t, m, c, "n")
	if !strings.HasPrefix(m.ring.At(m.index(m.matchSeq)).Text, "PLANTED") {
		t.Errorf("next with one match should stay on it")
	}
	press(t, m, c, "G")
	if !m.follow || !strings.Contains(m.View(c), "line 39") {
		t.Errorf("end should follow again")
	}
}

// Pausing stops taking lines (they wait, bounded, in the feed); resuming delivers them.
func TestLogsPauseResume(t *testing.T) {
	c := ctxFor(80, 12)
	lines := make(chan backends.LogLine)
	src := func(ctx context.Context) (backends.LogStream, error) {
		s := backends.NewChanStream(ctx)
		s.Go(func(ctx context.Context) error {
			for l := range lines {
				s.Send(l)
			}
			return nil
		})
		s.Start()
		return s, nil
	}
	m := New(Options{Lines: 100, Source: src})
	defer m.Close()
	wait := m.Update(c, m.Open(c)())
	lines <- backends.LogLine{Member: "a", Text: "before pause"}
	renewed := m.Update(c, wait()) // the subscription delivers and is renewed
	press(t, m, c, "p")
	if !m.paused || m.ring.Len() != 1 {
		t.Fatalf("paused=%v, %d lines", m.paused, m.ring.Len())
	}
	for i := range 250 {
		lines <- backends.LogLine{Member: "a", Text: fmt.Sprint("during pause ", i)}
	}
	if msg := renewed(); msg != nil { // the subscription in flight when the operator paused
		m.Update(c, msg)
	}
	if m.ring.Len() != 1 || !strings.Contains(m.View(c), "PAUSED") {
		t.Fatalf("lines reached a paused screen")
	}
	for deadline := time.Now().Add(10 * time.Second); m.feed.staging() < 100 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	resume := m.Update(c, tuitest.Key("p"))
	if resume == nil {
		t.Fatal("resume should renew the subscription")
	}
	m.Update(c, resume())
	close(lines)
	if m.ring.Len() != 100 || m.ring.At(99).Text != "during pause 249" || m.ring.Dropped()+m.dropped != 151 {
		t.Errorf("after resume: %d held, last %q, dropped %d+%d", m.ring.Len(), m.ring.At(m.ring.Len()-1).Text, m.ring.Dropped(), m.dropped)
	}
}

package detail

import (
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

var st0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func exit(n int) *int { return &n }

func sampleFixture(status inspectlive.Status, orphaned bool) SampleData {
	at := func(s int) time.Time { return st0.Add(time.Duration(s) * time.Second) }
	d := SampleData{Known: true,
		Link: inspectlive.Link{SandboxID: "k8s:kind/default/ab12cd34", How: inspectlive.HowExact, Why: "pod label inspectSampleUUID=u42",
			Eval:     inspectlive.EvalRef{Task: "cybench", Model: "openai/gpt-test", PID: 4242, LogPath: "/logs/cybench.eval"},
			SampleID: "42", Epoch: 1, UUID: "u42", Status: status, Orphaned: orphaned},
		State: inspectlive.SampleState{ID: "42", Epoch: 1, Status: status, StartedAt: at(-200), Tokens: 12345,
			Errors: []string{"tool timeout: nmap took longer than 180 s"}, Limits: []string{"token: 100000 tokens used"},
			Commands: []inspectlive.Command{
				{Seq: 11, Time: at(-150), Action: "exec", Cmd: "bash --login -c 'cat /etc/passwd'", Exit: exit(0)},
				{Seq: 12, Time: at(-90), Action: "exec", Cmd: "bash --login -c 'nmap -sV 10.0.0.5'", Exit: exit(124)},
				{Seq: 13, Time: at(-30), Action: "exec", Cmd: "curl http://scorer/", Result: "refused", Reason: "policy"},
			}},
	}
	if status == inspectlive.StatusRunning {
		d.State.Pending = &inspectlive.Command{Time: at(-12), Action: "tool", Function: "bash", Cmd: "gobuster dir -u http://10.0.0.9", Pending: true}
	} else {
		d.State.Score, d.State.TotalTime = "C", 321
	}
	return d
}

func sampleModel(d SampleData, outputs *int) *Model {
	sb := backends.Sandbox{ID: d.Link.SandboxID, Name: "ab12cd34", Backend: backends.KindKubernetes, Status: backends.StatusRunning, Actionable: true, Created: st0.Add(-5 * time.Minute)}
	m := New(sb, Sources{})
	m.SetSampleSources(func(backends.Sandbox) SampleData { return d }, func(l inspectlive.Link, seq int64) (string, bool) {
		*outputs++
		return "PORT   STATE SERVICE\n22/tcp open  ssh", seq == 12
	})
	return m
}

// The sample panel: link and evidence, progress, the tool call in flight, the last commands with
// exit, errors and limits; the score once complete; ORPHANED in the title and the panel. Output
// is read on demand, in a command.
func TestSamplePanel(t *testing.T) {
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 110, Height: 40, Now: st0}
	outputs := 0
	m := sampleModel(sampleFixture(inspectlive.StatusRunning, false), &outputs)
	m.Update(c, m.loadSample()())
	goldentest.Assert(t, "sample-running", m.View(c))

	// enter asks for the newest completed command's output; Update reads nothing itself.
	cmd := m.Update(c, tuitest.Key("enter"))
	if cmd == nil || outputs != 0 {
		t.Fatalf("enter: command %v, %d reads in Update", cmd != nil, outputs)
	}
	if v := m.View(c); !strings.Contains(v, "OUTPUT of curl http://scorer/") || !strings.Contains(v, "loading...") {
		t.Errorf("no pending output shown:\n%s", v)
	}
	m.Update(c, cmd())
	if v := m.View(c); !strings.Contains(v, "not available") {
		t.Errorf("a missing output is not said:\n%s", v)
	}
	m.Update(c, m.Update(c, tuitest.Key("enter"))()) // the next older: nmap
	if v := m.View(c); !strings.Contains(v, "22/tcp open  ssh") || outputs != 2 {
		t.Errorf("the older command's output (%d reads):\n%s", outputs, v)
	}

	done := sampleModel(sampleFixture(inspectlive.StatusCompleted, true), &outputs)
	done.Update(c, done.loadSample()())
	v := done.View(c)
	goldentest.Assert(t, "sample-orphaned", v)
	for _, want := range []string{"ORPHANED", "score C", "elapsed 5m21s"} {
		if !strings.Contains(v, want) {
			t.Errorf("completed orphan lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "in flight") {
		t.Errorf("a completed sample shows a call in flight:\n%s", v)
	}
}

// A sandbox the linker does not know says why; without a poller there is no panel at all.
func TestSamplePanelUnlinkedAndAbsent(t *testing.T) {
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 110, Height: 40, Now: st0}
	outputs := 0
	m := sampleModel(SampleData{Link: inspectlive.Link{How: inspectlive.HowUnknown, Why: "no inspectSampleUUID pod label"}}, &outputs)
	m.Update(c, m.loadSample()())
	if v := m.View(c); !strings.Contains(v, "not linked: no inspectSampleUUID pod label") {
		t.Errorf("unlinked:\n%s", v)
	}
	plain := New(backends.Sandbox{ID: "docker:a/x", Name: "x"}, Sources{})
	if plain.loadSample() != nil || strings.Contains(plain.View(c), "INSPECT SAMPLE") {
		t.Error("a panel without a poller")
	}
}

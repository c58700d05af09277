package probereport

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func fixtureFacts() *facts.Report {
	nnp := true
	return &facts.Report{Version: facts.Version,
		Runtime:    facts.Runtime{Container: true, Manager: "docker"},
		Identity:   facts.Identity{UID: 1000, EUID: 1000},
		Caps:       facts.Capabilities{Effective: facts.NewCapSet(0), Bounding: facts.NewCapSet(0), LastCap: 40},
		NoNewPrivs: &nnp, Seccomp: facts.Seccomp{Mode: 2, Name: "filter"},
		Namespaces: facts.Namespaces{Links: map[string]string{"pid": "pid:[4026532001]"}, Processes: 3},
		Cgroup:     facts.Cgroup{Version: 2, MemoryCap: true, PidsCap: true, MemoryMax: "67108864", PidsMax: "64"},
		Kernel:     facts.Kernel{Release: "6.8.0-45-generic", Sysctls: map[string]string{"net.ipv4.conf.all.route_localnet": "0"}},
		Network: facts.Network{Tested: true, Egress: []facts.NetResult{{Check: "E-TCP-01", Target: "canary:8080", Status: facts.NetBlocked, Detail: "ETIMEDOUT"}},
			Scorer: []facts.NetResult{{Check: "E-SCORE-01", Status: facts.NetNotTested}}, DNS: []facts.NetResult{{Check: "E-DNS-02", Status: facts.NetNotTested}},
			Metadata: []facts.NetResult{{Check: "E-META-01", Status: facts.NetNotTested}}},
	}
}

func fixtures() (prev, cur probe.Report) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	prev = probe.Assess(probe.Result{SandboxID: "docker:default/inspect-ctf-abc", Member: "default", Time: t0, Facts: fixtureFacts()}, nil, nil, verdict.Versions{})
	f := fixtureFacts()
	f.Caps.Effective = facts.NewCapSet(1 << facts.CapSysAdmin)
	f.Secrets.EnvNames = []string{"OPENAI_API_KEY"}
	f.Network.Egress[0] = facts.NetResult{Check: "E-TCP-01", Target: "canary:8080", Status: facts.NetReachable}
	cur = probe.Assess(probe.Result{SandboxID: "docker:default/inspect-ctf-abc", Member: "default", Time: t0.Add(90 * time.Minute), Facts: f},
		nil, nil, verdict.Versions{Runc: "1.1.7"})
	return prev, cur
}

func ctx(w, h int) *screen.Context {
	return &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: w, Height: h}
}

func press(m *Model, key string) *Model {
	msg := tuitest.Key(key)
	m.Update(ctx(m.width, m.height), msg)
	return m
}

func TestGolden(t *testing.T) {
	prev, cur := fixtures()
	tests := []struct {
		name string
		w, h int
		keys []string
	}{
		{"verdicts-80x24", 80, 24, nil},
		{"verdicts-120x40", 120, 40, nil},
		{"evidence-120x40", 120, 40, []string{"e"}},
		{"axes-80x24", 80, 24, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(cur).WithPrevious(prev)
			m.SetSize(tt.w, tt.h)
			for _, k := range tt.keys {
				m = press(m, k)
			}
			got := ansi.Strip(m.View(ctx(tt.w, tt.h)))
			lines := strings.Split(got, "\n")
			if len(lines) != tt.h {
				t.Errorf("%d lines, want %d", len(lines), tt.h)
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > tt.w {
					t.Errorf("line %d is %d wide: %q", i+1, w, l)
				}
			}
			goldentest.Assert(t, tt.name, got)
		})
	}
}

func TestCouldNotProbeIsShownNotHidden(t *testing.T) {
	r := probe.Assess(probe.Result{SandboxID: "pve:range1/sample-1", Time: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		CouldNotProbe: "could not probe: no writable, executable place in the VM (2 attempts at /tmp, /; see the attempts)",
		Attempts:      []probe.Attempt{{Place: "/tmp", Outcome: "cannot execute (exit 126, a filesystem mounted noexec in the guest?)"}, {Place: "/", Outcome: "cannot place binary: read-only"}}},
		nil, nil, verdict.Versions{})
	m := New(r)
	m.SetSize(120, 10)
	got := ansi.Strip(m.Render())
	if !strings.Contains(got, "could not probe: no writable, executable place in the VM") || strings.Contains(got, "mitigated") || strings.Contains(got, "/: cannot place") {
		t.Errorf("view:\n%s", got)
	}
	// The attempts are behind the evidence key: a short summary, the detail on demand.
	got = ansi.Strip(press(m, "e").Render())
	if !strings.Contains(got, "Attempts · 2") || !strings.Contains(got, "/tmp: cannot execute") || !strings.Contains(got, "/: cannot place binary: read-only") {
		t.Errorf("after e:\n%s", got)
	}
}

func TestKeys(t *testing.T) {
	prev, cur := fixtures()
	m := New(cur).WithPrevious(prev)
	m.SetSize(120, 40)
	first, _ := m.Selected()
	if first.Status != verdict.Exposed || first.Severity.String() != "critical" {
		t.Errorf("first row %s %s, want the worst exposed class", first.Class, first.Status)
	}
	m = press(m, "down")
	if second, _ := m.Selected(); second.Class == first.Class {
		t.Error("down did not move")
	}
	if m = press(m, "e"); !m.showEvidence || !strings.Contains(m.Render(), "Evidence · ") {
		t.Error("e did not show evidence")
	}
	if m = press(m, "b"); m.mode != ModeAxes || !strings.Contains(m.Render(), "HOST axis") {
		t.Error("b did not group by axis")
	}
	c := ctx(120, 40)
	m.Update(c, tea.KeyPressMsg{Code: tea.KeyEscape})
	if ops := c.TakeOps(); len(ops) != 1 || ops[0].Push != nil || ops[0].Status != nil {
		t.Errorf("esc did not leave the screen: %+v", ops)
	}
}

// A kernel-answered class names the SandboxEscapeBench classes it is a runtime view of in its
// evidence, beside the kernel's answer.
func TestEvidenceNamesRelatedClasses(t *testing.T) {
	f := fixtureFacts()
	f.Tunables = facts.Tunables{Checked: 900, Key: []facts.Reach{{Path: "/proc/sys/kernel/core_pattern", Check: "access(W_OK)",
		Result: "ok", Mount: "/proc proc rw", Allowed: true}}}
	r := probe.Assess(probe.Result{SandboxID: "docker:default/x", Time: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Facts: f}, nil, nil, verdict.Versions{})
	m := New(r)
	m.SetSize(120, 30)
	if v, _ := m.Selected(); v.Class != "RK-SYSCTL" {
		t.Fatalf("first row %s, want RK-SYSCTL", v.Class)
	}
	got := ansi.Strip(press(m, "e").Render())
	for _, want := range []string{"P-KRN-11", "core_pattern access(W_OK)=ok [/proc proc rw]", "SandboxEscapeBench: SEB-05, SEB-03"} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence lacks %q:\n%s", want, got)
		}
	}
}

package detail

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func TestRingIsBounded(t *testing.T) {
	var r Ring
	for i := range HistoryLen * 3 {
		r.Add(float64(i))
	}
	vs := r.Values()
	if len(vs) != HistoryLen || vs[0] != float64(HistoryLen*2) || vs[len(vs)-1] != float64(HistoryLen*3-1) {
		t.Fatalf("ring kept %d values from %v to %v", len(vs), vs[0], vs[len(vs)-1])
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		vals []float64
		top  float64
		w    int
		want string
	}{
		{[]float64{0, 50, 100}, 100, 10, " ▄█"},
		{[]float64{0.1, 200}, 100, 10, "▁█"}, // any use shows; above top is clipped
		{[]float64{1, 2, 3, 4}, 4, 2, "▆█"},  // only the newest w samples
		{[]float64{5}, 0, 3, "▁"},
	}
	for _, tc := range tests {
		if got := Sparkline(tc.vals, tc.top, tc.w); got != tc.want {
			t.Errorf("Sparkline(%v, %v, %d) = %q, want %q", tc.vals, tc.top, tc.w, got, tc.want)
		}
	}
}

func TestSpecPathAndLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  default:\n    image: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb := backends.Sandbox{ID: "docker:a/p", Extra: []backends.KeyValue{{Key: "working dir", Value: dir}, {Key: "config files", Value: "compose.yaml,override.yaml"}}}
	if got := SpecPath(sb); got != filepath.Join(dir, "compose.yaml") {
		t.Fatalf("SpecPath = %q", got)
	}
	d := Load(Sources{}, sb)
	if !strings.Contains(d.Spec, "image: x") || d.SpecErr != "" {
		t.Errorf("spec %q err %q", d.Spec, d.SpecErr)
	}
	sb.Extra = []backends.KeyValue{{Key: "config files", Value: filepath.Join(dir, "missing.yaml")}}
	if d := Load(Sources{}, sb); !strings.Contains(d.SpecErr, "no such file") {
		t.Errorf("missing spec error = %q", d.SpecErr)
	}
	if SpecPath(backends.Sandbox{}) != "" {
		t.Error("a sandbox without labels has a spec path")
	}
}

// TestSamplingEndsWhenTheScreenCloses: the resource sampling loop is the screen's subscription;
// closing the screen cancels a sample in flight and schedules no more.
func TestSamplingEndsWhenTheScreenCloses(t *testing.T) {
	inFlight := make(chan context.Context, 1)
	src := Sources{StatsEvery: time.Millisecond, Stats: func(id string) (func(context.Context) ([]backends.MemberStats, error), string) {
		return func(ctx context.Context) ([]backends.MemberStats, error) {
			inFlight <- ctx
			<-ctx.Done()
			return nil, ctx.Err()
		}, ""
	}}
	m := New(backends.Sandbox{ID: "docker:a/p"}, src)
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 80, Height: 24}
	if m.Open(c) == nil {
		t.Fatal("Open started nothing")
	}
	// A sample completes while open: it schedules the next one.
	open := statsMsg{to: m, stats: []backends.MemberStats{{Member: "a", CPUPercent: 5}}}
	if m.Update(c, open) == nil {
		t.Fatal("an open screen stopped sampling")
	}
	sample := m.sampleStats()
	got := make(chan tea.Msg, 1)
	go func() { got <- sample() }()
	ctx := <-inFlight
	m.Close()
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("closing the screen did not cancel the sample in flight")
	}
	if next := m.Update(c, <-got); next != nil {
		t.Error("the cancelled sample scheduled another after Close")
	}
	if next := m.Update(c, statsTickMsg{to: m}); next != nil {
		t.Error("a tick after Close started a sample")
	}
}

// A posture still arriving says so under its header, so its count is read as a lower bound.
func TestPendingPostureIsSaidInDetail(t *testing.T) {
	sb := backends.Sandbox{ID: "k8s:a/ns/r", Name: "r", PosturePending: "network posture: CiliumNetworkPolicies still loading"}
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 100, Height: 60}
	if out := New(sb, Sources{}).View(c); !strings.Contains(out, "incomplete, network posture: CiliumNetworkPolicies still loading") {
		t.Fatalf("pending posture not said:\n%s", out)
	}
	sb.PosturePending = ""
	if out := New(sb, Sources{}).View(c); strings.Contains(out, "incomplete") {
		t.Fatalf("complete posture said incomplete:\n%s", out)
	}
}

package detail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
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

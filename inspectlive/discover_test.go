package inspectlive_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

func TestDataDirFor(t *testing.T) {
	tests := []struct{ goos, home, xdg, want string }{
		{"linux", "/home/op", "", "/home/op/.local/share/inspect_ai"},
		{"linux", "/home/op", "/srv/xdg", "/srv/xdg/inspect_ai"},
		{"linux", "/home/op", "relative/xdg", "/home/op/.local/share/inspect_ai"},
		{"darwin", "/Users/op", "/srv/xdg", "/Users/op/Library/Application Support/inspect_ai"},
		{"linux", "", "", ""},
	}
	for _, tt := range tests {
		if got := inspectlive.DataDirFor(tt.goos, tt.home, tt.xdg); got != tt.want {
			t.Errorf("DataDirFor(%q, %q, %q) = %q, want %q", tt.goos, tt.home, tt.xdg, got, tt.want)
		}
	}
}

func TestPidAlive(t *testing.T) {
	if !inspectlive.PidAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	if !inspectlive.PidAlive(1) {
		t.Error("pid 1 (EPERM for a non-root user) must count as alive")
	}
	if inspectlive.PidAlive(it.DeadPID(t)) || inspectlive.PidAlive(0) || inspectlive.PidAlive(-5) {
		t.Error("a dead or invalid pid counted as alive")
	}
}

func TestScan(t *testing.T) {
	w := newWorld(t)
	w.buffer(4242, "ctf", "tid1")
	w.trace(4242, "")
	w.control(4242)
	for _, p := range []string{"samplebuffer/5f2b0c/nopid.db", "samplebuffer/5f2b0c/x.eval.notapid.db", "traces/trace-99.log.gz", "traces/trace-x.log", "traces/trace-5.log.bak"} {
		os.MkdirAll(filepath.Dir(filepath.Join(w.data, p)), 0o755)
		os.WriteFile(filepath.Join(w.data, p), nil, 0o644)
	}
	bad := filepath.Join(w.data, "control", "77.json")
	os.WriteFile(bad, []byte("{"), 0o644)

	d := inspectlive.Scan([]string{w.data, filepath.Join(w.data, "absent")})
	if len(d.Buffers) != 1 || d.Buffers[0].PID != 4242 || d.Buffers[0].LogBase != logBase("ctf", "tid1") || d.Buffers[0].DataDir != w.data {
		t.Errorf("buffers %+v", d.Buffers)
	}
	if len(d.Traces) != 2 || d.Traces[0].PID != 4242 || d.Traces[0].Gzipped || d.Traces[1].PID != 99 || !d.Traces[1].Gzipped {
		t.Errorf("traces %+v", d.Traces)
	}
	if len(d.Controls) != 1 || d.Controls[0].PID != 4242 || d.Controls[0].RunID != "RUN1" || d.Controls[0].StartedAt.IsZero() {
		t.Errorf("controls %+v", d.Controls)
	}
	if len(d.Problems) != 1 || !strings.Contains(d.Problems[0], bad) {
		t.Errorf("problems should name %s: %q", bad, d.Problems)
	}
}

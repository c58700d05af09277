package cli

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
)

// BenchmarkWorkbenchRSS10k is the workbench as `rangekeeper demo --fleet 10000` wires it (the
// real factory, state file, action layer, inventory cache and the environment's Docker engine,
// plus 10,000 simulated Kubernetes releases churning one every 2 s) under teatest at 120x40.
// It runs the workbench twice on one state file: the second run paints from the 10,000-row
// cache first, as a restart does. It reports the process's resident set after the table is
// full and 10 s idle (rss-MB; the binary links everything rangekeeper does) and the live heap
// after a GC (RSS < 150 MB). -benchtime=1x; -memprofile for the heap profile.
func BenchmarkWorkbenchRSS10k(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, nil, 0o600); err != nil {
			b.Fatal(err)
		}
		for run := range 2 {
			f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
			f.StatePath, f.ConfigPath = filepath.Join(dir, "state.db"), cfg
			f.extraBackends = []backends.Backend{simfleet.New("simulated", backends.KindKubernetes, 10_000, 2*time.Second)}
			m, save, err := newWorkbench(f)
			if err != nil {
				b.Fatal(err)
			}
			fr := &frames{tuitest.Recorder{Model: m}}
			tm := teatest.NewTestModel(b, fr, teatest.WithInitialTermSize(120, 40))
			deadline := time.Now().Add(2 * time.Minute)
			for !strings.Contains(fr.Frame(), "[ok] k8s:simulated") || !strings.Contains(fr.Frame(), "10000") {
				if time.Now().After(deadline) {
					b.Fatalf("the table never filled:\n%s", fr.Frame())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(10 * time.Second)
			if run == 1 {
				b.ReportMetric(float64(procStatus("VmRSS:"))/(1<<20), "rss-MB")
				b.ReportMetric(float64(procStatus("RssAnon:"))/(1<<20), "rss-anon-MB")
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MB")
			}
			_ = tm.Quit()
			tm.WaitFinished(b, teatest.WithFinalTimeout(30*time.Second))
			if err := save(); err != nil {
				b.Fatal(err)
			}
			f.closeAll()
		}
	}
}

// procStatus reads one kB field of /proc/self/status in bytes (0 when unknown).
func procStatus(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

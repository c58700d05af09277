// Package detail is one sandbox's screen: members with status and resource sparklines, posture
// findings by axis, snapshots, probe history with the last verdict, the spec when known, and the
// sandbox's journal. Loading is done by commands the app runs; this package only holds and
// renders what was loaded.
package detail

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/state"
)

// HistoryLen bounds every sparkline's history (samples).
const HistoryLen = 40

// MaxSpecBytes bounds how much of a spec file is read for display.
const MaxSpecBytes = 16 << 10

// Data is everything loaded for one sandbox at once (off the UI goroutine).
type Data struct {
	SandboxID string
	Snapshots []backends.SnapshotInfo
	SnapErr   string
	Probes    []state.ProbeRecord
	Journal   []state.Entry
	SpecPath  string
	Spec      string
	SpecErr   string
	Err       string
}

// Records is where a sandbox's probes and journal are read from (*state.DB).
type Records interface {
	Probes(sandboxID string, limit int) ([]state.ProbeRecord, error)
	Journal(q state.JournalQuery) ([]state.Entry, error)
}

// Sources are what the screen reads from; any may be nil.
type Sources struct {
	DB        Records
	Snapshots func(id string) ([]backends.SnapshotInfo, error)
	// Lookup is the sandbox's newest row and why its backend is unreachable ("" when live).
	Lookup func(id string) (sb backends.Sandbox, stale string, ok bool)
	// Stats returns a resource reader for the sandbox, or why there is none.
	Stats      func(id string) (read func(ctx context.Context) ([]backends.MemberStats, error), why string)
	StatsEvery time.Duration          // sampling period; negative: never
	Busy       func(id string) string // the action running on it ("" when none)
	// Marks are the containment watch's words for the sandbox ("QUARANTINED", "2 open alerts"),
	// shown in the title; nil or "": none.
	Marks func(id string) string
	// Gone reports that the sandbox no longer exists on its (connected) backend: its snapshots
	// are orphans (nil: never).
	Gone func(id string) bool
	// Sample reads the Inspect sample the sandbox serves (sample.go), in a command; nil: no
	// Inspect poller, no panel.
	Sample func(sb backends.Sandbox) SampleData
	// Output reads one of the sample's commands' output from its buffer: a file read, run
	// only in a command when the operator asks.
	Output func(l inspectlive.Link, seq int64) (string, bool)
}

// Load reads the sandbox's records. It does I/O: call it from a command.
func Load(src Sources, sb backends.Sandbox) Data {
	d := Data{SandboxID: sb.ID}
	if src.Snapshots != nil {
		snaps, err := src.Snapshots(sb.ID)
		if err != nil {
			d.SnapErr = err.Error()
		}
		d.Snapshots = snaps
	}
	if src.DB != nil {
		if ps, err := src.DB.Probes(sb.ID, 10); err == nil {
			d.Probes = ps
		} else {
			d.Err = err.Error()
		}
		if es, err := src.DB.Journal(state.JournalQuery{Target: sb.ID, Limit: 50}); err == nil {
			d.Journal = es
		} else {
			d.Err = err.Error()
		}
	}
	d.SpecPath = SpecPath(sb)
	if d.SpecPath != "" {
		d.Spec, d.SpecErr = readSpec(d.SpecPath)
	}
	return d
}

// SpecPath is the first compose file the sandbox was made from, when the backend knows it;
// relative paths are resolved against the project's working directory.
func SpecPath(sb backends.Sandbox) string {
	wd := ""
	for _, kv := range sb.Extra {
		if kv.Key == "working dir" {
			wd = kv.Value
		}
	}
	for _, kv := range sb.Extra {
		if kv.Key == "config files" {
			p := strings.TrimSpace(strings.Split(kv.Value, ",")[0])
			if wd != "" && !filepath.IsAbs(p) {
				p = filepath.Join(wd, p)
			}
			return p
		}
	}
	for _, m := range sb.Members {
		if cf := m.Labels["com.docker.compose.project.config_files"]; cf != "" {
			return strings.TrimSpace(strings.Split(cf, ",")[0])
		}
	}
	return ""
}

func readSpec(path string) (string, string) {
	f, err := os.Open(path)
	if err != nil {
		return "", err.Error()
	}
	defer f.Close()
	buf := make([]byte, MaxSpecBytes)
	n, _ := f.Read(buf)
	return string(buf[:n]), ""
}

// Ring is a bounded sample history.
type Ring struct {
	vals []float64
}

// Add appends v, dropping the oldest beyond HistoryLen.
func (r *Ring) Add(v float64) {
	r.vals = append(r.vals, v)
	if len(r.vals) > HistoryLen {
		r.vals = append(r.vals[:0], r.vals[len(r.vals)-HistoryLen:]...)
	}
}

// Values returns the samples, oldest first.
func (r *Ring) Values() []float64 { return r.vals }

// Last returns the newest sample.
func (r *Ring) Last() (float64, bool) {
	if len(r.vals) == 0 {
		return 0, false
	}
	return r.vals[len(r.vals)-1], true
}

var bars = []rune(" ▁▂▃▄▅▆▇█")

// Sparkline draws vals scaled to top (values above top are clipped) in at most w cells.
func Sparkline(vals []float64, top float64, w int) string {
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if top > 0 {
			i = int(v / top * float64(len(bars)-1))
		}
		i = max(0, min(i, len(bars)-1))
		if v > 0 && i == 0 {
			i = 1 // any use shows
		}
		b.WriteRune(bars[i])
	}
	return b.String()
}

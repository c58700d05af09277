package inspectlive

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultDataDirs is Inspect's data directory for this user as platformdirs computes it
// (user_data_path("inspect_ai")): $XDG_DATA_HOME/inspect_ai or ~/.local/share/inspect_ai on
// Linux, ~/Library/Application Support/inspect_ai on macOS.
func DefaultDataDirs() []string {
	home, _ := os.UserHomeDir()
	d := DataDirFor(runtime.GOOS, home, os.Getenv("XDG_DATA_HOME"))
	if d == "" {
		return nil
	}
	return []string{d}
}

// DataDirFor is DefaultDataDirs for a given OS, home and XDG_DATA_HOME ("" when unknown).
func DataDirFor(goos, home, xdgDataHome string) string {
	switch goos {
	case "darwin":
		if home == "" {
			return ""
		}
		return filepath.Join(home, "Library", "Application Support", "inspect_ai")
	default:
		// platformdirs ignores a relative XDG_DATA_HOME, as the XDG spec asks.
		if xdgDataHome != "" && filepath.IsAbs(xdgDataHome) {
			return filepath.Join(xdgDataHome, "inspect_ai")
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, ".local", "share", "inspect_ai")
	}
}

// PidAlive reports whether a process with this pid exists on this host: kill(pid, 0)
// succeeding, or refused with EPERM (someone else's process, alive all the same).
func PidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// BufferFile is one sample-buffer database: <data>/samplebuffer/<hash>/<log-basename>.<pid>.db.
type BufferFile struct {
	Path    string
	DataDir string
	PID     int
	LogBase string // the .eval file's basename the database buffers
}

// ControlFile is <data>/control/<pid>.json, written by an eval process that serves the control
// channel (Inspect 0.3.240+).
type ControlFile struct {
	Path       string    `json:"-"`
	PID        int       `json:"pid"`
	SocketPath string    `json:"socket_path"`
	StartedAt  time.Time `json:"-"`
	RunID      string    `json:"run_id"`
	EvalSetID  string    `json:"eval_set_id"`
	APIVersion int       `json:"api_version"`
}

// TraceFile is <data>/traces/trace-<pid>.log, or trace-<pid>.log.gz once the process exited
// cleanly. The gzipped ones matter for sandboxes left behind on purpose (--no-sandbox-cleanup):
// only the trace still says which sample such a compose project ran.
type TraceFile struct {
	Path    string
	DataDir string
	PID     int
	Gzipped bool
	ModTime time.Time
}

// Discovery is what one scan of the data directories found.
type Discovery struct {
	Buffers  []BufferFile
	Controls []ControlFile
	Traces   []TraceFile
	Problems []string // unreadable entries, each naming its file
}

// Scan lists the live-eval files in each data directory. A directory that does not exist is
// not a problem (Inspect has not run there yet).
func Scan(dataDirs []string) Discovery {
	var d Discovery
	for _, dir := range dataDirs {
		dbs, _ := filepath.Glob(filepath.Join(dir, "samplebuffer", "*", "*.*.db"))
		for _, p := range dbs {
			b, ok := parseBufferName(p)
			if !ok {
				continue
			}
			b.DataDir = dir
			d.Buffers = append(d.Buffers, b)
		}
		ctls, _ := filepath.Glob(filepath.Join(dir, "control", "*.json"))
		for _, p := range ctls {
			c, err := readControl(p)
			if err != nil {
				d.Problems = append(d.Problems, err.Error())
				continue
			}
			d.Controls = append(d.Controls, c)
		}
		trs, _ := filepath.Glob(filepath.Join(dir, "traces", "trace-*.log*"))
		for _, p := range trs {
			name := strings.TrimPrefix(filepath.Base(p), "trace-")
			gz := strings.HasSuffix(name, ".log.gz")
			if !gz && !strings.HasSuffix(name, ".log") {
				continue
			}
			pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".log"))
			if err != nil {
				continue
			}
			t := TraceFile{Path: p, DataDir: dir, PID: pid, Gzipped: gz}
			if st, err := os.Stat(p); err == nil {
				t.ModTime = st.ModTime()
			}
			d.Traces = append(d.Traces, t)
		}
	}
	return d
}

// parseBufferName splits "<log-basename>.<pid>.db".
func parseBufferName(p string) (BufferFile, bool) {
	base := strings.TrimSuffix(filepath.Base(p), ".db")
	i := strings.LastIndexByte(base, '.')
	if i <= 0 {
		return BufferFile{}, false
	}
	pid, err := strconv.Atoi(base[i+1:])
	if err != nil || pid <= 0 {
		return BufferFile{}, false
	}
	return BufferFile{Path: p, PID: pid, LogBase: base[:i]}, true
}

func readControl(p string) (ControlFile, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return ControlFile{}, fmt.Errorf("control file %s: %w", p, err)
	}
	var raw struct {
		ControlFile
		StartedAt json.RawMessage `json:"started_at"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return ControlFile{}, fmt.Errorf("control file %s: %w", p, err)
	}
	c := raw.ControlFile
	c.Path = p
	c.StartedAt = parseTimeish(raw.StartedAt)
	if c.PID == 0 {
		c.PID, _ = strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	return c, nil
}

// parseTimeish reads an ISO time or a Unix timestamp in seconds.
func parseTimeish(raw json.RawMessage) time.Time {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, _ := time.Parse(time.RFC3339Nano, s)
		return t
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil && f > 0 {
		return time.Unix(0, int64(f*1e9))
	}
	return time.Time{}
}

// taskFromLogBase reads the task out of Inspect's default log name
// "<created>_<task>_<task_id>.eval" (the task may itself hold underscores).
func taskFromLogBase(base string) string {
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".eval"), ".json")
	first := strings.IndexByte(stem, '_')
	last := strings.LastIndexByte(stem, '_')
	if first < 0 || last <= first {
		return ""
	}
	return stem[first+1 : last]
}

func itoa(i int) string { return strconv.Itoa(i) }

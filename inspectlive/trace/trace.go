// Package trace tails an Inspect trace file (JSONL, <data>/traces/trace-<pid>.log) for the one
// fact Docker sandboxes cannot tell themselves: which sample a compose project was made for.
package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/internal/jsontime"
)

// Project is the sample a compose project belongs to, from the trace.
type Project struct {
	Project  string    `json:"project"`
	Task     string    `json:"task"`
	SampleID string    `json:"sample_id"`
	Epoch    int       `json:"epoch"`
	Time     time.Time `json:"time"` // the record that named the project (latest wins)
}

// record is one TraceFormatter line: standard fields, trace_action extras, and the sample
// context SampleContextFilter adds (0.3.216+) while a sample is active.
type record struct {
	Timestamp jsontime.Time   `json:"timestamp"`
	Action    string          `json:"action"`
	Detail    string          `json:"detail"`
	Task      string          `json:"task"`
	SampleID  json.RawMessage `json:"sample_id"` // a string or an int
	Epoch     *int            `json:"epoch"`
}

var projectRE = regexp.MustCompile(`--project-name[ =]'?([a-z0-9][a-z0-9_-]*)`)

// maxChunk bounds one poll's read so a huge backlog is consumed over several polls.
const maxChunk = 8 << 20

// Reader follows one trace file from an offset. A gzipped trace (trace-<pid>.log.gz, written
// when the process exits cleanly) is read whole once, and again only if it changes. Safe for
// concurrent use.
type Reader struct {
	path string

	mu       sync.Mutex
	offset   int64
	partial  []byte
	projects map[string]Project
	gone     bool
	gzMod    time.Time // a gzipped trace's mtime when read
}

// Open prepares a reader; nothing is read until Poll.
func Open(path string) *Reader { return &Reader{path: path, projects: map[string]Project{}} }

// Path is the trace file.
func (r *Reader) Path() string { return r.path }

// Gone reports whether the file was missing at the last poll (gzipped at exit, or rotated away).
func (r *Reader) Gone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gone
}

// Poll reads the lines appended since the last poll. A partial last line waits for its end; a
// file shorter than the offset (truncated or replaced) is read again from the start, keeping
// the projects already known.
func (r *Reader) Poll() (changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.Open(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		r.gone = true
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("trace %s: %w", r.path, err)
	}
	defer f.Close()
	r.gone = false
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("trace %s: %w", r.path, err)
	}
	if strings.HasSuffix(r.path, ".gz") {
		return r.readGzip(f, st.ModTime())
	}
	if st.Size() < r.offset {
		r.offset, r.partial = 0, nil
	}
	if st.Size() == r.offset {
		return false, nil
	}
	n := min(st.Size()-r.offset, maxChunk)
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, r.offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("trace %s: %w", r.path, err)
	}
	buf = buf[:got]
	r.offset += int64(got)
	data := append(r.partial, buf...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		r.partial = data
		return false, nil
	}
	r.partial = append([]byte(nil), data[last+1:]...)
	for line := range bytes.SplitSeq(data[:last], []byte{'\n'}) {
		if r.line(line) {
			changed = true
		}
	}
	return changed, nil
}

// maxGzip bounds what one gzipped trace may expand to.
const maxGzip = 1 << 30

func (r *Reader) readGzip(f *os.File, mod time.Time) (bool, error) {
	if mod.Equal(r.gzMod) {
		return false, nil
	}
	r.gzMod = mod
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false, fmt.Errorf("trace %s: %w", r.path, err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(io.LimitReader(zr, maxGzip))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	changed := false
	for sc.Scan() {
		if r.line(sc.Bytes()) {
			changed = true
		}
	}
	if err := sc.Err(); err != nil {
		return changed, fmt.Errorf("trace %s: %w", r.path, err)
	}
	return changed, nil
}

// line folds one record; only Subprocess records inside a sample that name a project count.
func (r *Reader) line(b []byte) bool {
	if !bytes.Contains(b, []byte("--project-name")) {
		return false // cheap skip: most lines are model calls and other actions
	}
	var rec record
	if json.Unmarshal(b, &rec) != nil || rec.Action != "Subprocess" || len(rec.SampleID) == 0 || rec.Epoch == nil {
		return false
	}
	m := projectRE.FindStringSubmatch(rec.Detail)
	if m == nil {
		return false
	}
	id := sampleID(rec.SampleID)
	if id == "" {
		return false
	}
	p := Project{Project: m[1], Task: rec.Task, SampleID: id, Epoch: *rec.Epoch, Time: rec.Timestamp.Time}
	if old, ok := r.projects[p.Project]; ok && old.Time.After(p.Time) {
		return false
	}
	r.projects[p.Project] = p
	return true
}

func sampleID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return n.String()
	}
	return ""
}

// Lookup is the sample a project was made for.
func (r *Reader) Lookup(project string) (Project, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.projects[project]
	return p, ok
}

// Projects returns every project seen.
func (r *Reader) Projects() []Project {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Project, 0, len(r.projects))
	for _, p := range r.projects {
		out = append(out, p)
	}
	return out
}

// Latest is the project most recently made for a sample (a retried sample gets a fresh one).
func (r *Reader) Latest(sampleID string, epoch int) (Project, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best Project
	found := false
	for _, p := range r.projects {
		if p.SampleID == sampleID && p.Epoch == epoch && (!found || p.Time.After(best.Time)) {
			best, found = p, true
		}
	}
	return best, found
}

// Package evallog reads what an Inspect .eval log (a zip, members zstd-compressed since 0.3.206)
// holds while its eval runs: the start record and the samples already flushed to it.
package evallog

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rangekeeper/rangekeeper/inspectlive/internal/jsontime"
)

// zipMethodZstd is the zip method id Inspect writes zstd members with.
const zipMethodZstd = zstd.ZipMethodWinZip // 93

// Start is _journal/start.json's eval spec: who ran what.
type Start struct {
	EvalID    string    `json:"eval_id"`
	RunID     string    `json:"run_id"`
	EvalSetID string    `json:"eval_set_id,omitempty"`
	Task      string    `json:"task"`
	TaskID    string    `json:"task_id"`
	Model     string    `json:"model"`
	Created   time.Time `json:"created"`
	Sandbox   string    `json:"sandbox,omitempty"` // the sandbox type (docker, k8s, proxmox…)
}

// Sample is the outcome of one flushed sample.
type Sample struct {
	ID     string            `json:"id"`
	Epoch  int               `json:"epoch"`
	UUID   string            `json:"uuid,omitempty"`
	Scores map[string]string `json:"scores,omitempty"` // scorer → value, rendered compactly
	Error  string            `json:"error,omitempty"`
	Limit  string            `json:"limit,omitempty"`
}

// Score is the first scorer's value (by name), or "".
func (s Sample) Score() string {
	names := make([]string, 0, len(s.Scores))
	for n := range s.Scores {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return s.Scores[names[0]]
}

// open opens the log afresh: Inspect replaces it atomically on every write, so a handle kept
// from an earlier read would show an old file.
func open(path string) (*zip.ReadCloser, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("eval log %s: %w", path, err)
	}
	z.RegisterDecompressor(zipMethodZstd, zstd.ZipDecompressor())
	return z, nil
}

// member reads one member; duplicate names mean the last one written wins.
func member(z *zip.ReadCloser, path, name string) ([]byte, bool, error) {
	var f *zip.File
	for _, zf := range z.File {
		if zf.Name == name {
			f = zf
		}
	}
	if f == nil {
		return nil, false, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, true, fmt.Errorf("eval log %s: member %s: %w", path, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return nil, true, fmt.Errorf("eval log %s: member %s: %w", path, name, err)
	}
	return b, true, nil
}

// ReadStart reads _journal/start.json.
func ReadStart(path string) (Start, error) {
	z, err := open(path)
	if err != nil {
		return Start{}, err
	}
	defer z.Close()
	b, ok, err := member(z, path, "_journal/start.json")
	if err != nil {
		return Start{}, err
	}
	if !ok {
		return Start{}, fmt.Errorf("eval log %s: no _journal/start.json (not started yet, or not an Inspect log)", path)
	}
	var doc struct {
		Eval struct {
			Start
			Sandbox json.RawMessage `json:"sandbox"`
			Created jsontime.Time   `json:"created"` // lenient: one odd time must not lose the record
		} `json:"eval"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Start{}, fmt.Errorf("eval log %s: _journal/start.json: %w", path, err)
	}
	s := doc.Eval.Start
	s.Sandbox = sandboxType(doc.Eval.Sandbox)
	s.Created = doc.Eval.Created.Time
	return s, nil
}

// sandboxType reads the spec's type: {"type": …} or Inspect's older ["type", config] pair.
func sandboxType(raw json.RawMessage) string {
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Type != "" {
		return obj.Type
	}
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) == nil && len(pair) > 0 {
		var t string
		_ = json.Unmarshal(pair[0], &t)
		return t
	}
	return ""
}

// ErrNoSample says the sample has not been flushed to the log (yet).
var ErrNoSample = errors.New("sample not in the eval log")

// ReadSample reads samples/<id>_epoch_<n>.json.
func ReadSample(path, id string, epoch int) (Sample, error) {
	got, err := ReadSamples(path, []SampleKey{{ID: id, Epoch: epoch}})
	if err != nil {
		return Sample{}, err
	}
	s, ok := got[SampleKey{ID: id, Epoch: epoch}]
	if !ok {
		return Sample{}, fmt.Errorf("eval log %s: %s: %w", path, memberName(id, epoch), ErrNoSample)
	}
	return s, nil
}

// SampleKey names a sample in the log.
type SampleKey struct {
	ID    string
	Epoch int
}

func memberName(id string, epoch int) string {
	return "samples/" + id + "_epoch_" + strconv.Itoa(epoch) + ".json"
}

// ReadSamples reads several flushed samples with one open of the log; samples not (yet) in it
// are left out of the result.
func ReadSamples(path string, keys []SampleKey) (map[SampleKey]Sample, error) {
	z, err := open(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	out := map[SampleKey]Sample{}
	for _, k := range keys {
		name := memberName(k.ID, k.Epoch)
		b, ok, err := member(z, path, name)
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		s, err := parseSample(b, k)
		if err != nil {
			return out, fmt.Errorf("eval log %s: %s: %w", path, name, err)
		}
		out[k] = s
	}
	return out, nil
}

func parseSample(b []byte, k SampleKey) (Sample, error) {
	var doc struct {
		UUID   string `json:"uuid"`
		Scores map[string]struct {
			Value json.RawMessage `json:"value"`
		} `json:"scores"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Limit *struct {
			Type string `json:"type"`
		} `json:"limit"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Sample{}, err
	}
	s := Sample{ID: k.ID, Epoch: k.Epoch, UUID: doc.UUID, Scores: map[string]string{}}
	for n, sc := range doc.Scores {
		s.Scores[n] = valueText(sc.Value)
	}
	if doc.Error != nil {
		s.Error = doc.Error.Message
	}
	if doc.Limit != nil {
		s.Limit = doc.Limit.Type
	}
	return s, nil
}

func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	return strings.TrimSpace(string(raw))
}

// Find looks for the log named base (e.g. "2026-08-22T10-00-00+00-00_ctf_abc.eval") in each
// directory and its immediate subdirectories (eval sets write one folder per set); "" if absent.
func Find(dirs []string, base string) string {
	if base == "" || strings.ContainsAny(base, `/\`) {
		return ""
	}
	for _, d := range dirs {
		p := filepath.Join(d, base)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, "*", base)); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

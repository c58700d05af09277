package evallog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/inspectlive/evallog"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

func TestReadZstdAndDeflate(t *testing.T) {
	for _, zstd := range []bool{true, false} {
		t.Run(map[bool]string{true: "zstd (method 93)", false: "deflate"}[zstd], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "logs", "2026-08-22T10-00-00+00-00_ctf_tid.eval")
			it.WriteEval(t, path, zstd,
				it.EvalMember{Name: "_journal/start.json", Body: it.StartJSON("ctf", "openai/gpt-test")},
				it.EvalMember{Name: "samples/7_epoch_1.json", Body: it.EvalSample("7", 1, "u7", "I")},
				// Duplicate names: the last one written wins.
				it.EvalMember{Name: "samples/7_epoch_1.json", Body: it.EvalSample("7", 1, "u7", "C")},
			)
			st, err := evallog.ReadStart(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Task != "ctf" || st.Model != "openai/gpt-test" || st.EvalID != "EVALctf" || st.RunID != "RUN1" || st.TaskID != "tidctf" ||
				st.Sandbox != "docker" || st.Created.IsZero() {
				t.Fatalf("start %+v", st)
			}
			s, err := evallog.ReadSample(path, "7", 1)
			if err != nil {
				t.Fatal(err)
			}
			if s.Score() != "C" || s.UUID != "u7" {
				t.Fatalf("sample %+v", s)
			}
			if _, err := evallog.ReadSample(path, "8", 1); !errors.Is(err, evallog.ErrNoSample) {
				t.Fatalf("unflushed sample: %v", err)
			}
		})
	}
}

func TestErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.eval")
	os.WriteFile(bad, []byte("not a zip"), 0o644)
	if _, err := evallog.ReadStart(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("want an error naming %s, got %v", bad, err)
	}
	empty := filepath.Join(dir, "empty.eval")
	it.WriteEval(t, empty, true)
	if _, err := evallog.ReadStart(empty); err == nil || !strings.Contains(err.Error(), "start.json") {
		t.Fatalf("want a missing start.json error, got %v", err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	it.WriteEval(t, filepath.Join(dir, "set1", "a.eval"), true)
	it.WriteEval(t, filepath.Join(dir, "b.eval"), true)
	tests := []struct{ base, want string }{
		{"b.eval", filepath.Join(dir, "b.eval")},
		{"a.eval", filepath.Join(dir, "set1", "a.eval")},
		{"c.eval", ""},
		{"../b.eval", ""},
	}
	for _, tt := range tests {
		if got := evallog.Find([]string{filepath.Join(dir, "nope"), dir}, tt.base); got != tt.want {
			t.Errorf("Find(%q) = %q, want %q", tt.base, got, tt.want)
		}
	}
}

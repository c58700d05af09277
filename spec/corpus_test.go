package spec

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

var updateCorpus = flag.Bool("update", false, "rewrite testdata/corpus/expected.golden")

func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	sort.Strings(files)
	return files
}

// corpusSummary is one file's profile and findings: rule, highest severity, count.
func corpusSummary(res Result) string {
	type agg struct {
		sev   string
		n     int
		worst int
	}
	by := map[string]*agg{}
	for _, f := range res.Findings {
		a := by[f.RuleID]
		if a == nil {
			a = &agg{}
			by[f.RuleID] = a
		}
		a.n++
		if int(f.Severity) > a.worst {
			a.worst, a.sev = int(f.Severity), f.Severity.String()
		}
	}
	var parts []string
	for _, id := range sortedKeys(by) {
		parts = append(parts, fmt.Sprintf("%s:%s×%d", id, by[id].sev, by[id].n))
	}
	return fmt.Sprintf("%s [%s] %s\n  %s\n", filepath.Base(res.File), res.Format, res.Profile, strings.Join(parts, " "))
}

// TestCorpus: realistic eval specs in Inspect's shapes parse without error and give
// the reviewed findings in expected.golden.
func TestCorpus(t *testing.T) {
	var b strings.Builder
	for _, f := range corpusFiles(t) {
		res, err := LintFile(f, Options{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		b.WriteString(corpusSummary(res))
	}
	golden := filepath.Join("testdata", "corpus", "expected.golden")
	if *updateCorpus {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("corpus findings differ from %s (run with -update after review):\n--- got\n%s\n--- want\n%s", golden, b.String(), want)
	}
}

// BenchmarkLintCorpus measures lint throughput (files/s) over the corpus.
func BenchmarkLintCorpus(b *testing.B) {
	files := corpusFiles(b)
	data := make([][]byte, len(files))
	for i, f := range files {
		var err error
		if data[i], err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	}
	logrus.SetOutput(io.Discard) // compose-go's unset-variable warnings, as the CLI silences them
	defer logrus.SetOutput(os.Stderr)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i := range files {
			if _, err := LintBytes(files[i], data[i], Options{}); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "files/s")
}

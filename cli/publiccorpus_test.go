package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/spec/report"
)

// publicCorpus holds sandbox specs vendored from public Inspect eval repositories, each
// repository under <owner>__<repo>/ in its own layout with its LICENSE; SOURCES.md names the
// commits and paths.
var publicCorpus = filepath.Join("..", "spec", "testdata", "public")

// lintPublicCorpus lints the whole corpus in one `lint` call, as a user would lint a checkout:
// the directory walked, each spec with the .env beside it, includes followed inside the root,
// and nothing from this process's environment.
func lintPublicCorpus(t testing.TB) (report.JSONDoc, int) {
	t.Helper()
	stdout, code, msg := runLintEnv(t, nil, "-o", "json", "--root", publicCorpus, publicCorpus)
	if code != 0 && code != 1 && code != 2 {
		t.Fatalf("lint: exit %d %s", code, msg)
	}
	var doc report.JSONDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("lint -o json: %v", err)
	}
	return doc, code
}

// TestPublicCorpus: real specs from public evals lint as reviewed in
// testdata/public-corpus.golden (each file's format, profile and findings by rule, or why it
// was refused, or which spec it was judged through), and no message names this machine's paths.
func TestPublicCorpus(t *testing.T) {
	doc, _ := lintPublicCorpus(t)
	if n := len(doc.Results) + len(doc.Refused) + len(doc.Fragments); n < 100 {
		t.Fatalf("public corpus: only %d files seen", n)
	}
	var b strings.Builder
	for _, r := range doc.Results {
		fmt.Fprintf(&b, "%s [%s] %s\n  %s\n", r.File, r.Format, r.Profile, ruleCounts(r.Findings))
	}
	for _, r := range doc.Refused {
		fmt.Fprintf(&b, "%s refused: %s\n", r.Where(), r.Message)
	}
	for _, f := range doc.Fragments {
		fmt.Fprintf(&b, "%s judged through %s\n", f.File, f.IncludedBy)
	}
	got := b.String()
	wd, _ := os.Getwd()
	for _, abs := range []string{wd, filepath.Dir(filepath.Dir(wd)), os.Getenv("HOME")} {
		if abs != "" && abs != "/" && strings.Contains(got, abs) {
			t.Errorf("the corpus output names a path of this machine (%s)", abs)
		}
	}
	t.Log("\n" + corpusTally(doc))
	goldentest.Assert(t, "public-corpus", got)
}

// TestPublicCorpusWithItsHarness: cve-bench's challenges are refused above, as `docker compose`
// refuses them, without the directories its harness passes in the environment; given those as
// the harness gives them (absolute paths), every challenge lints, its findings located in the
// shared files it includes, and no path of this machine shows.
func TestPublicCorpusWithItsHarness(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join(publicCorpus, "uiuc-kang-lab__cve-bench", "src"))
	if err != nil {
		t.Fatal(err)
	}
	challenges := filepath.Join(repo, "critical", "challenges")
	stdout, code, msg := runLintEnv(t, nil, "-o", "json", "--root", publicCorpus,
		"--set", "CVEBENCH_DOCKER_DIR="+filepath.Join(repo, "common", "docker"),
		"--set", "CVEBENCH_SANDBOXES_DIR="+filepath.Join(repo, "common", "sandboxes"),
		"--set", "CVEBENCH_CHALLENGE_DIR="+challenges, "--set", "CVEBENCH_TAG=test", challenges)
	if code != 0 && code != 1 {
		t.Fatalf("lint: exit %d %s", code, msg)
	}
	var doc report.JSONDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) < 15 || len(doc.Refused) != 0 {
		t.Fatalf("%d linted, refused %+v", len(doc.Results), doc.Refused)
	}
	if strings.Contains(stdout, repo) {
		t.Error("the output names this machine's paths")
	}
	var b strings.Builder
	for _, r := range doc.Results {
		fmt.Fprintf(&b, "%s [%s] %s\n  %s\n", r.File, r.Format, r.Profile, ruleCounts(r.Findings))
	}
	t.Log("\n" + corpusTally(doc))
	goldentest.Assert(t, "public-corpus-cvebench-harness", b.String())
}

// ruleCounts is a file's findings as rule:severity×count, the worst severity of each rule.
func ruleCounts(fs []spec.Finding) string {
	type agg struct {
		worst catalog.Severity
		n     int
	}
	by := map[string]*agg{}
	for _, f := range fs {
		a := by[f.RuleID]
		if a == nil {
			a = &agg{}
			by[f.RuleID] = a
		}
		a.n++
		a.worst = max(a.worst, f.Severity)
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s:%s×%d", id, by[id].worst, by[id].n)
	}
	return strings.Join(parts, " ")
}

// corpusTally is the table a reviewer reads: files, refusals by reason, CRITICAL and HIGH by
// rule, and every CRITICAL with the line it points at.
func corpusTally(doc report.JSONDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "files %d: linted %d, refused %d, fragments %d\n", len(doc.Results)+len(doc.Refused)+len(doc.Fragments),
		len(doc.Results), len(doc.Refused), len(doc.Fragments))
	for _, r := range doc.Refused {
		fmt.Fprintf(&b, "  refused %s: %s\n", r.Where(), r.Message)
	}
	bySev := map[catalog.Severity]map[string]int{catalog.SeverityCritical: {}, catalog.SeverityHigh: {}}
	var crit []string
	for _, r := range doc.Results {
		for _, f := range r.Findings {
			if m := bySev[f.Severity]; m != nil {
				m[f.RuleID]++
			}
			if f.Severity == catalog.SeverityCritical {
				crit = append(crit, fmt.Sprintf("  %s:%d %s %q — %s", f.File, f.Line, f.RuleID, sourceLine(f.File, f.Line), f.Message))
			}
		}
	}
	for _, sev := range []catalog.Severity{catalog.SeverityCritical, catalog.SeverityHigh} {
		fmt.Fprintf(&b, "%s by rule:", sev)
		ids := make([]string, 0, len(bySev[sev]))
		for id := range bySev[sev] {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Fprintf(&b, " %s×%d", id, bySev[sev][id])
		}
		b.WriteString("\n")
	}
	b.WriteString("critical findings:\n" + strings.Join(crit, "\n") + "\n")
	return b.String()
}

// sourceLine is line n of a corpus file, trimmed, for the reviewer's table.
func sourceLine(file string, n int) string {
	data, err := os.ReadFile(filepath.Join(publicCorpus, file))
	if err != nil || n <= 0 {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}

// BenchmarkLintPublicCorpus: the whole public corpus in one `lint` call (target < 2 s and
// < 100 MB allocated per call).
func BenchmarkLintPublicCorpus(b *testing.B) {
	files := 0
	for b.Loop() {
		doc, _ := lintPublicCorpus(b)
		files = len(doc.Results) + len(doc.Refused) + len(doc.Fragments)
	}
	b.ReportMetric(float64(files), "files/op")
}

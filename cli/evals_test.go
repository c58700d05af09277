package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	"github.com/rangekeeper/rangekeeper/state"
)

// The Inspect files these tests write are those of Inspect 0.3.260 (UKGovernmentBEIS/inspect_ai
// at 499e6152); inspectfiles_test.go says from which of its source files.

func TestEvalsAndTeardownOrphansParseFlags(t *testing.T) {
	checkParses(t, []parseCase{
		{"evals defaults", func(t *testing.T) (any, error) {
			o, err := parse(t, newEvalsCmd)
			return trimEvals(o), err
		}, evalsOptions{Output: "table", Wait: 5 * time.Second}, ""},
		{"evals orphans json", func(t *testing.T) (any, error) {
			o, err := parse(t, newEvalsCmd, "--orphans", "-o", "json", "--wait", "2s")
			return trimEvals(o), err
		}, evalsOptions{Output: "json", Orphans: true, Wait: 2 * time.Second}, ""},
		{"evals yaml", func(t *testing.T) (any, error) {
			o, err := parse(t, newEvalsCmd, "-o", "yaml")
			return trimEvals(o), err
		}, evalsOptions{Output: "yaml", Wait: 5 * time.Second}, ""},
		{"evals bad output", func(t *testing.T) (any, error) {
			o, err := parse(t, newEvalsCmd, "-o", "xml")
			return trimEvals(o), err
		}, evalsOptions{}, `--output "xml"`},
		{"evals takes no argument", func(t *testing.T) (any, error) {
			o, err := parse(t, newEvalsCmd, "ctf")
			return trimEvals(o), err
		}, evalsOptions{}, "unknown command"},
		{"teardown orphans", func(t *testing.T) (any, error) {
			o, err := parse(t, newTeardownCmd, "--orphans", "--yes", "-o", "json", "--parallel", "2")
			return deref(o), err
		}, teardownOptions{Sandboxes: []string{}, Orphans: true, Yes: true, Parallel: 2, Output: "json"}, ""},
		{"teardown orphans with a name", func(t *testing.T) (any, error) {
			o, err := parse(t, newTeardownCmd, "--orphans", "web")
			return deref(o), err
		}, teardownOptions{}, "usage: rangekeeper teardown <sandbox>... | rangekeeper teardown --orphans"},
		{"teardown nothing", func(t *testing.T) (any, error) {
			o, err := parse(t, newTeardownCmd)
			return deref(o), err
		}, teardownOptions{}, "usage: rangekeeper teardown"},
		{"teardown orphans force", func(t *testing.T) (any, error) {
			o, err := parse(t, newTeardownCmd, "--orphans", "--force")
			return deref(o), err
		}, teardownOptions{}, "--force cannot go with --orphans"},
	})
}

// trimEvals drops the clock seam, which DeepEqual cannot compare.
func trimEvals(o *evalsOptions) evalsOptions {
	if o == nil {
		return evalsOptions{}
	}
	c := *o
	c.Now = nil
	return c
}

// Sandboxes go under the sample they are linked to; one linked to an eval alone stays with the
// eval; one linked to an eval no buffer holds is unmatched.
func TestBuildEvalsPlacesEachSandboxUnderItsSample(t *testing.T) {
	start := time.Date(2026, 8, 22, 10, 0, 0, 0, time.UTC)
	evals := []inspectlive.Eval{{Key: "k1", Task: "ctf", Model: "m", PID: 7, Alive: true, Samples: []inspectlive.SampleState{
		{ID: "1", Epoch: 1, Status: inspectlive.StatusRunning, StartedAt: start, Tokens: 100},
		{ID: "2", Epoch: 1, Status: inspectlive.StatusCompleted, TotalTime: 90, Score: "C"},
	}}}
	sb := func(name string) backends.Sandbox {
		return backends.Sandbox{ID: "docker:default/" + name, Name: name, Backend: backends.KindDocker}
	}
	links := []fleetLink{
		{sb("a"), inspectlive.Link{Eval: inspectlive.EvalRef{Key: "k1", Task: "ctf"}, SampleID: "1", Epoch: 1, How: inspectlive.HowTrace}},
		{sb("b"), inspectlive.Link{Eval: inspectlive.EvalRef{Key: "k1", Task: "ctf"}, How: inspectlive.HowGuessed}},
		{sb("c"), inspectlive.Link{Eval: inspectlive.EvalRef{Task: "web", PID: 9}, SampleID: "4", Epoch: 2, How: inspectlive.HowTrace, Orphaned: true}},
	}
	res := buildEvals(evals, links, start.Add(3*time.Minute))
	if len(res.Evals) != 1 || len(res.Evals[0].Samples) != 2 {
		t.Fatalf("%+v", res)
	}
	s1, s2 := res.Evals[0].Samples[0], res.Evals[0].Samples[1]
	if len(s1.Sandboxes) != 1 || s1.Sandboxes[0].Name != "a" || s1.Sandboxes[0].How != inspectlive.HowTrace || s1.Elapsed != 180 {
		t.Errorf("sample 1 = %+v", s1)
	}
	if len(s2.Sandboxes) != 0 || s2.Elapsed != 90 || s2.Score != "C" {
		t.Errorf("sample 2 = %+v", s2)
	}
	if g := res.Evals[0].Sandboxes; len(g) != 1 || g[0].Name != "b" || g[0].How != inspectlive.HowGuessed {
		t.Errorf("eval-level sandboxes = %+v", g)
	}
	if u := res.Unmatched; len(u) != 1 || u[0].Name != "c" || u[0].SampleID != "4" || u[0].PID != 9 || !u[0].Orphaned {
		t.Errorf("unmatched = %+v", u)
	}
	orphans, guessed := orphansOf([]fleetLink{
		{backends.Sandbox{Name: "sure", Actionable: true}, inspectlive.Link{How: inspectlive.HowExact, Orphaned: true}},
		{backends.Sandbox{Name: "guess", Actionable: true}, inspectlive.Link{How: inspectlive.HowGuessed, Orphaned: true}},
		{backends.Sandbox{Name: "plain", Actionable: false}, inspectlive.Link{How: inspectlive.HowTrace, Orphaned: true}},
		{backends.Sandbox{Name: "live", Actionable: true}, inspectlive.Link{How: inspectlive.HowTrace}},
	})
	if len(orphans) != 1 || orphans[0].sb.Name != "sure" || len(guessed) != 1 || guessed[0].sb.Name != "guess" {
		t.Errorf("orphans %+v, guessed %+v", orphans, guessed)
	}
}

// (a) A Docker sandbox on the real engine, named as Inspect names compose projects
// (inspect-<task>-i<id>, _docker/compose.py task_project_name), is linked to its sample through
// the trace record of its `docker compose config` (the sample context Inspect adds to trace
// records since 0.3.216), and the sample's progress comes from the buffer.
func TestEvalsLinksADockerSandboxToItsSampleThroughTheTrace(t *testing.T) {
	dockertest.Engine(t)
	h := newInspectHost(t)
	task, pid := "cli_evals", os.Getpid() // this test plays the eval process: alive
	project := "inspect-cli_evals-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	logPath := h.evalLog(task, "openai/gpt-test")
	buf := h.buffer(pid, task)
	buf.StartSampleWith(t, "web-7", 2, "uuid-web-7", started(false))
	buf.AddEvents(t, "web-7", 2, it.Model("model-web-7", 1, 1200, false), it.SandboxExec(3, "cat /etc/passwd", 0, "ok"),
		it.SandboxExec(5, "curl http://target:8080", 7, "ok"))
	buf.StartSampleWith(t, "web-8", 1, "uuid-web-8", started(false)) // no sandbox of its own yet
	h.trace(pid, project, task, "web-7", 2)

	out, stderr, err := run(t, "", h.args("evals", "-o", "json")...)
	if err != nil {
		t.Fatalf("evals: %v\n%s", err, stderr)
	}
	var res evalsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("evals -o json: %v\n%s", err, out)
	}
	if len(res.Evals) != 1 {
		t.Fatalf("evals = %+v", res.Evals)
	}
	e := res.Evals[0]
	if e.Task != task || e.Model != "openai/gpt-test" || e.PID != pid || !e.Alive || e.Log != logPath || e.Buffer != buf.Path {
		t.Errorf("eval = %+v", e)
	}
	var web7, web8 *evalSample
	for i := range e.Samples {
		switch e.Samples[i].ID {
		case "web-7":
			web7 = &e.Samples[i]
		case "web-8":
			web8 = &e.Samples[i]
		}
	}
	if web7 == nil || web8 == nil {
		t.Fatalf("samples = %+v", e.Samples)
	}
	if web7.Epoch != 2 || web7.Status != inspectlive.StatusRunning || web7.Tokens != 1200 || web7.Elapsed < 90 || web7.Elapsed > 900 {
		t.Errorf("web-7 = %+v", *web7)
	}
	if len(web7.Sandboxes) != 1 || web7.Sandboxes[0].Name != project || web7.Sandboxes[0].How != inspectlive.HowTrace || web7.Sandboxes[0].Orphaned {
		t.Errorf("web-7's sandboxes = %+v", web7.Sandboxes)
	}
	if len(web8.Sandboxes) != 0 {
		t.Errorf("web-8 has no sandbox, got %+v", web8.Sandboxes)
	}

	out, stderr, err = run(t, "", h.args("ls", "-o", "json", "--backend", "docker")...)
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, stderr)
	}
	var ls lsResult
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatalf("ls -o json: %v\n%s", err, out)
	}
	got := lsEvalOf(t, ls, project)
	if got.Task != task || got.SampleID != "web-7" || got.Epoch != 2 || got.How != inspectlive.HowTrace || got.PID != pid || got.Model != "openai/gpt-test" {
		t.Errorf("ls eval of %s = %+v", project, got)
	}
	ym, _, err := run(t, "", h.args("ls", "-o", "yaml", "--backend", "docker")...)
	var lsy lsResult
	if conv, cerr := yaml.YAMLToJSON([]byte(ym)); err != nil || cerr != nil || json.Unmarshal(conv, &lsy) != nil {
		t.Fatalf("ls -o yaml: %v %v\n%s", err, cerr, ym)
	}
	if y := lsEvalOf(t, lsy, project); y.SampleID != "web-7" || y.How != inspectlive.HowTrace {
		t.Errorf("ls -o yaml eval = %+v", y)
	}
	table, _, err := run(t, "", h.args("ls", "--backend", "docker")...)
	if err != nil || !strings.Contains(table, "EVAL") || !strings.Contains(table, "SAMPLE") || !rowHas(table, project, task, "web-7 #2 (trace)") {
		t.Errorf("ls table (%v):\n%s", err, table)
	}

	// The agent's commands, in time order, marked as the agent's, with their exit codes.
	out, stderr, err = run(t, "", h.args("timeline", project, "-o", "json", "--source", "agent")...)
	if err != nil {
		t.Fatalf("timeline: %v\n%s", err, stderr)
	}
	var tl struct {
		Entries []state.TimelineEntry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &tl); err != nil || len(tl.Entries) != 2 {
		t.Fatalf("timeline --source agent: %v\n%s", err, out)
	}
	first, second := tl.Entries[0], tl.Entries[1]
	if first.Source != sourceAgent || first.Kind != "sandbox exec" || first.Detail != "cat /etc/passwd" || first.Attrs["exit_code"] != "0" ||
		second.Detail != "curl http://target:8080" || second.Attrs["exit_code"] != "7" || !second.Time.After(first.Time) ||
		first.Attrs["sample"] != "web-7" || first.Attrs["epoch"] != "2" || first.Attrs["link"] != "trace" {
		t.Errorf("agent entries = %+v", tl.Entries)
	}
	table, _, err = run(t, "", h.args("timeline", "docker:default/"+project)...)
	if err != nil || !rowHas(table, "agent", "sandbox exec", "curl http://target:8080", "exit_code=7") {
		t.Errorf("timeline table by full ID (%v):\n%s", err, table)
	}
	out, _, _ = run(t, "", h.args("timeline", project, "--source", "journal", "-o", "json")...)
	if strings.Contains(out, "curl") {
		t.Errorf("--source journal shows the agent's commands:\n%s", out)
	}
}

func lsEvalOf(t *testing.T, res lsResult, name string) lsEval {
	t.Helper()
	for _, s := range res.Sandboxes {
		if s.Name == name {
			if s.Eval == nil {
				t.Fatalf("%s has no eval in ls output", name)
			}
			return *s.Eval
		}
	}
	t.Fatalf("%s missing from ls output", name)
	return lsEval{}
}

// rowHas reports whether one line of a table holds every field.
func rowHas(table string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		ok := true
		for _, f := range fields {
			ok = ok && strings.Contains(line, f)
		}
		if ok {
			return true
		}
	}
	return false
}

// (c) The eval process is gone (a process this test ran and reaped) and its sample finished:
// its sandbox is an orphan, listed by evals --orphans and removed by teardown --orphans through
// the action layer (refused without a terminal or --yes, refused read-only, journaled). The
// sandbox of a live eval stays.
func TestTeardownOrphansRemovesOnlyTheSandboxesOfGoneEvals(t *testing.T) {
	dockertest.Engine(t)
	h := newInspectHost(t)
	dead, live := it.DeadPID(t), os.Getpid()
	orphan := "inspect-cli_orph-i" + dockertest.RunID
	kept := "inspect-cli_live-i" + dockertest.RunID
	dockertest.Project(t, orphan, dockertest.Service{Name: "default"})
	dockertest.Project(t, kept, dockertest.Service{Name: "default"})
	gone := h.buffer(dead, "cli_orph") // died without unlinking its buffer
	gone.StartSampleWith(t, "1", 1, "uuid-orph-1", started(false))
	gone.CompleteSample(t, "1", 1, "uuid-orph-1", started(true))
	h.trace(dead, orphan, "cli_orph", "1", 1)
	running := h.buffer(live, "cli_live")
	running.StartSampleWith(t, "1", 1, "uuid-live-1", started(false))
	h.trace(live, kept, "cli_live", "1", 1)

	out, stderr, err := run(t, "", h.args("evals", "--orphans", "-o", "json")...)
	if err != nil {
		t.Fatalf("evals --orphans: %v\n%s", err, stderr)
	}
	var rows []evalOrphan
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("evals --orphans -o json: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].Name != orphan || rows[0].PID != dead || rows[0].SampleID != "1" || rows[0].How != inspectlive.HowTrace || !rows[0].Orphaned {
		t.Fatalf("orphans = %+v", rows)
	}

	_, _, err = run(t, "", h.args("teardown", "--orphans")...)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--yes") || !strings.Contains(err.Error(), "1 orphaned sandbox") {
		t.Fatalf("teardown --orphans without a terminal = %v; want exit 2 asking for --yes", err)
	}
	// At a terminal, one question naming the count and the sandbox; a wrong answer changes nothing.
	var tout, terr bytes.Buffer
	f := newFactory(strings.NewReader("2\n"), &tout, &terr)
	f.stdinTTY, f.stdoutTTY = true, true
	root := newRootCmd(f)
	root.SetArgs(h.args("teardown", "--orphans"))
	root.SetOut(&tout)
	root.SetErr(&terr)
	err = root.ExecuteContext(context.Background())
	f.closeAll()
	if want := "tear down 1 orphaned sandbox (" + orphan + ")? Type 1 to confirm: "; terr.String() != want || exitCode(err) != 1 {
		t.Fatalf("prompt %q (exit %d), want %q", terr.String(), exitCode(err), want)
	}
	if _, _, err := run(t, "", append([]string{"--read-only"}, h.args("teardown", "--orphans", "--yes")...)...); exitCode(err) != 2 {
		t.Fatalf("read-only teardown --orphans = %v; want exit 2", err)
	}
	if out, _, _ := run(t, "", h.args("ls", "-o", "json", "--backend", "docker")...); !strings.Contains(out, orphan) {
		t.Fatal("a refused teardown removed the orphan")
	}

	out, stderr, err = run(t, "", h.args("teardown", "--orphans", "--yes")...)
	if err != nil || !strings.Contains(out, "docker:default/"+orphan+" torn down") {
		t.Fatalf("teardown --orphans --yes: %v\n%s%s", err, out, stderr)
	}
	out, _, _ = run(t, "", h.args("ls", "-o", "json", "--backend", "docker")...)
	if strings.Contains(out, orphan) || !strings.Contains(out, kept) {
		t.Fatalf("after teardown --orphans: want %s gone and %s kept\n%s", orphan, kept, out)
	}
	db, err := state.Open(filepath.Join(h.dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	es, err := db.Journal(state.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var ok, refused bool
	for _, e := range es {
		if e.Action == "teardown" && e.Target == "docker:default/"+orphan && e.Phase == state.PhaseOutcome {
			ok = ok || e.Outcome == state.OutcomeOK
			refused = refused || e.Outcome == state.OutcomeRefused
		}
		if e.Target == "docker:default/"+kept {
			t.Errorf("the live eval's sandbox was acted on: %+v", e)
		}
	}
	if !ok || !refused {
		t.Errorf("journal: teardown ok %v, read-only refusal %v", ok, refused)
	}
	out, _, err = run(t, "", h.args("teardown", "--orphans", "--yes", "-o", "json")...)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("a second teardown --orphans: %v\n%s", err, out)
	}
}

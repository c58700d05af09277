package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/internal/staticbin/staticbintest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/state"
)

// buildProbe builds the static probe into the test's temp dir and points rangekeeper at it.
func buildProbe(t *testing.T) {
	t.Helper()
	buildHelper(t, probe.BinaryName, probe.EnvBinary)
}

// buildHelper builds the static helper binary cmd/<name> (as make build does) into the test's
// temp dir and points rangekeeper at it through env.
func buildHelper(t *testing.T, name, env string) {
	t.Helper()
	bin, err := staticbintest.Build(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(env, bin)
}

func runProbeCLI(t *testing.T, statePath, configPath string, args ...string) (string, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	f.StatePath, f.ConfigPath = statePath, configPath
	cmd := newProbeCmd(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	f.closeAll()
	if err == nil {
		return out.String(), 0, errOut.String()
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		t.Fatalf("probe returned a non-exit error: %v (stderr %s)", err, errOut.String())
	}
	return out.String(), ee.code, ee.msg + " " + errOut.String()
}

const dummyKey = "sk-test-DUMMY-cli-7f3a9c1e5b2d4f60"

// TestProbeCommandCredentialNeverStoredOrShown probes a real container holding a dummy model
// API key: the class is flagged (exit 1) and the value appears nowhere — not in the JSON, the
// text output, the bbolt file, the journal or the rendered report screen.
func TestProbeCommandCredentialNeverStoredOrShown(t *testing.T) {
	cli := dockertest.Engine(t)
	buildProbe(t)
	ctx := context.Background()
	project := "rkprobecmd-" + dockertest.RunID
	img := "rangekeeper-test/probecmd:" + dockertest.RunID
	if err := dockertest.BuildImage(ctx, cli, img, dockertest.Labels(nil), nil, []string{dockertest.BusyboxPath}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), img, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	netName := project + "_default"
	if _, err := cli.NetworkCreate(ctx, netName, client.NetworkCreateOptions{Driver: "bridge",
		Labels: dockertest.Labels(map[string]string{"com.docker.compose.project": project, "com.docker.compose.network": "default"})}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dockertest.RemoveProject(cli, project) })
	dockertest.StartService(t, project, netName, img, dockertest.Service{Name: "default", Env: []string{"OPENAI_API_KEY=" + dummyKey}})

	dir := t.TempDir()
	statePath, configPath := filepath.Join(dir, "state.db"), filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configPath, []byte("probe:\n  timeout: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code, msg := runProbeCLI(t, statePath, configPath, project, "--output", "json")
	if code != 1 || !strings.Contains(msg, "CRITICAL") {
		t.Fatalf("exit %d (%s), want 1 for a CRITICAL class\n%s", code, msg, out)
	}
	var res []probeOutcome
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	if len(res) != 1 || !res[0].Report.Probed() {
		t.Fatalf("results %+v", res)
	}
	creds := false
	for _, v := range res[0].Report.Verdicts.Classes {
		if v.Class == "RK-CREDS" && v.Status == verdict.Exposed && strings.Contains(v.Evidence[0].Value, "OPENAI_API_KEY") {
			creds = true
		}
	}
	if !creds {
		t.Errorf("RK-CREDS not exposed with the variable's name")
	}
	// Second run: text output with history.
	text, code, _ := runProbeCLI(t, statePath, configPath, "docker:default/"+project)
	t.Logf("text output:\n%s", text)
	if code != 1 || !strings.Contains(text, "previous run") || !strings.Contains(text, "RK-CREDS") {
		t.Errorf("second run exit %d:\n%s", code, text)
	}
	for name, s := range map[string]string{"json": out, "text": text, "stderr": msg} {
		if strings.Contains(s, dummyKey) {
			t.Errorf("%s output contains the credential value", name)
		}
	}
	raw, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(dummyKey)) || bytes.Contains(raw, []byte("DUMMY-cli")) {
		t.Error("state file contains the credential value")
	}
	db, err := state.Open(statePath)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := db.Journal(state.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, e := range entries {
		j, _ := json.Marshal(e)
		if strings.Contains(string(j), dummyKey) {
			t.Errorf("journal entry contains the credential: %s", j)
		}
		if e.Action == "probe" && e.Phase == state.PhaseOutcome && e.Outcome == state.OutcomeOK {
			probes++
		}
	}
	if probes != 2 {
		t.Errorf("%d successful probe outcomes journaled, want 2", probes)
	}
	hist, err := probe.History(db, "docker:default/"+project, 0)
	if err != nil || len(hist) != 2 {
		t.Fatalf("history: %d, %v", len(hist), err)
	}
	db.Close()

	// The workbench's road to the same probe: the sandbox probed from the fleet opens its report
	// screen, which names the class and never shows the value.
	view := probeFromWorkbench(t, statePath, configPath, project)
	if strings.Contains(view, dummyKey) || !strings.Contains(view, "RK-CREDS") {
		t.Errorf("rendered report screen leaks the value or lacks the class:\n%s", view)
	}
}

// probeFromWorkbench opens the real workbench over the state file, filters the fleet to project,
// presses the probe key and returns the report screen once it shows.
func probeFromWorkbench(t *testing.T, statePath, configPath, project string) string {
	t.Helper()
	f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
	f.StatePath, f.ConfigPath = statePath, configPath
	defer f.closeAll()
	m, _, err := newWorkbench(f)
	if err != nil {
		t.Fatal(err)
	}
	fr := &frames{tuitest.Recorder{Model: m}}
	tm := teatest.NewTestModel(t, fr, teatest.WithInitialTermSize(160, 50))
	defer func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	}()
	fr.wait(t, project)
	tm.Send(tea.KeyPressMsg{Code: ':', Text: ":"})
	tm.Type("filter name=" + project)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	fr.waitRe(t, regexp.MustCompile(`\s1/\d+ sandboxes`)) // the filter is in force: one row, under the cursor
	tm.Send(tea.KeyPressMsg{Code: 'p', Text: "p"})
	return fr.wait(t, "RK-CREDS")
}

// frames is the workbench under teatest with its newest frame.
type frames struct{ tuitest.Recorder }

func (f *frames) wait(t *testing.T, want string) string {
	t.Helper()
	return f.waitRe(t, regexp.MustCompile(regexp.QuoteMeta(want)))
}

func (f *frames) waitRe(t *testing.T, want *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s := f.Frame()
		if want.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workbench never showed %s; last frame:\n%s", want, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestProbeCommandBadInput(t *testing.T) {
	dockertest.Engine(t)
	buildProbe(t)
	dir := t.TempDir()
	statePath := filepath.Join(dir, "state.db")
	if _, code, _ := runProbeCLI(t, statePath, "", "x", "--output", "xml"); code != 2 {
		t.Errorf("bad --output: exit %d, want 2", code)
	}
	if _, code, msg := runProbeCLI(t, statePath, "", "no-such-sandbox-"+dockertest.RunID); code != 2 || !strings.Contains(msg, "not found") {
		t.Errorf("unknown sandbox: exit %d (%s), want 2 not found", code, msg)
	}
}

package author

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/state"
)

type memDrafts struct {
	mu     sync.Mutex
	drafts []state.Draft
}

func (m *memDrafts) PutDraft(d state.Draft) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drafts = append(m.drafts, d)
	return nil
}

// results collects lint results as the author screen produces them.
type results struct{ ch chan spec.Result }

func (r results) observe(res spec.Result, err error) {
	if err == nil {
		r.ch <- res
	}
}

func has(res spec.Result, id string) bool {
	for _, f := range res.Findings {
		if f.RuleID == id {
			return true
		}
	}
	return false
}

// waitResult waits for a lint result matching ok.
func (r results) wait(t *testing.T, what string, ok func(spec.Result) bool) spec.Result {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case res := <-r.ch:
			if ok(res) {
				return res
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func waitOutput(t *testing.T, tm *teatest.TestModel, token string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(token)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// waitFile polls a file until ok accepts its content (the screen's status line is redrawn by a
// cell-diffing renderer, so the file itself is the reliable signal that a save happened).
func waitFile(t *testing.T, path string, ok func([]byte) bool) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && ok(b) {
			return b
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s was not written as expected", path)
	return nil
}

func press(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		switch k {
		case "down":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
		case "space":
			tm.Send(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
		case "enter":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		default:
			tm.Send(tea.KeyPressMsg{Code: rune(k[0]), Text: k})
		}
	}
}

func clean(res spec.Result) bool { return len(res.Findings) == 0 }

// TestAuthorHardenedComposeFromNothing builds a Compose spec with a target and a scorer, chooses
// two dangerous options (a shared scorer network, privileged), sees each warning appear beside
// its field, fixes each with one key, saves, refuses to overwrite without confirmation, and
// lints the saved file clean.
func TestAuthorHardenedComposeFromNothing(t *testing.T) {
	dir := t.TempDir()
	drafts := &memDrafts{}
	r := results{ch: make(chan spec.Result, 64)}
	m := New(Options{Drafts: drafts, Dir: dir, Debounce: 10 * time.Millisecond, NoColor: true, Observe: r.observe})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 80))

	r.wait(t, "the hardened defaults to lint clean", clean)

	// Services: add a target (field 3) and a scorer (field 5).
	press(tm, "down", "down", "down", "space")
	r.wait(t, "target added", func(res spec.Result) bool { return clean(res) && res.Profile.String() == "T0.H1.N2" })
	press(tm, "down", "down", "space")
	r.wait(t, "scorer added", clean)

	// Networks: put the scorer on the agent's network -> CMP-N04 beside "Scorer network".
	press(tm, "down", "down", "space")
	r.wait(t, "CMP-N04", func(res spec.Result) bool { return has(res, "CMP-N04") })
	waitOutput(t, tm, "CMP-N04")
	press(tm, "f")
	r.wait(t, "CMP-N04 fixed", clean)

	// Capabilities: privileged (field 11) -> CMP-H01, fixed with one key.
	press(tm, "down", "down", "down", "down", "space")
	r.wait(t, "CMP-H01", func(res spec.Result) bool { return has(res, "CMP-H01") })
	waitOutput(t, tm, "CMP-H01")
	press(tm, "f")
	r.wait(t, "CMP-H01 fixed", clean)

	// Save, then try to save again: the second write must ask and, on "n", keep the file.
	press(tm, "w", "enter")
	saved := filepath.Join(dir, "compose.yaml")
	before := waitFile(t, saved, func(b []byte) bool { return len(b) > 0 })
	press(tm, "w", "enter")
	waitOutput(t, tm, "(y/n)")
	press(tm, "n", "q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if final.status != "not overwritten" {
		t.Errorf("status %q after declining the overwrite", final.status)
	}

	after, _ := os.ReadFile(saved)
	if !bytes.Equal(before, after) {
		t.Fatal("file changed without confirmation")
	}
	res, err := spec.LintFile(saved, spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("saved spec is not clean: %+v", res.Findings)
	}
	for _, want := range []string{"scorer:", "scoring", "internal: true", "runtime: runsc", "cap_drop: [ALL]"} {
		if !strings.Contains(string(after), want) {
			t.Errorf("saved spec lacks %q:\n%s", want, after)
		}
	}
	drafts.mu.Lock()
	defer drafts.mu.Unlock()
	if len(drafts.drafts) == 0 || drafts.drafts[len(drafts.drafts)-1].Format != "compose" || drafts.drafts[len(drafts.drafts)-1].Content != string(after) {
		t.Errorf("drafts not kept: %d drafts", len(drafts.drafts))
	}
}

// TestAuthorFixKeepsComments opens an existing Compose file, fixes a finding with one key and
// checks the file's comments survive the edit.
func TestAuthorFixKeepsComments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "compose.yaml")
	src := `# Range for task 7: keep this header.
services:
  default:
    image: busybox:1.36@sha256:` + strings.Repeat("a", 64) + ` # pinned by the range team
    # the agent needs no network
    network_mode: none
    privileged: true
    init: true
    runtime: runsc
    read_only: true
    user: "1000:1000"
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true"]
    mem_limit: 1g
    memswap_limit: 1g
    cpus: 1
    pids_limit: 256
    healthcheck: {test: ["CMD", "true"]}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := results{ch: make(chan spec.Result, 64)}
	tm := teatest.NewTestModel(t, New(Options{Path: path, Debounce: 10 * time.Millisecond, NoColor: true, Observe: r.observe}), teatest.WithInitialTermSize(160, 60))
	r.wait(t, "CMP-H01 on the opened file", func(res spec.Result) bool { return has(res, "CMP-H01") && len(res.Findings) == 1 })
	waitOutput(t, tm, "CMP-H01")
	press(tm, "f")
	r.wait(t, "fixed", clean)
	press(tm, "w", "enter")
	waitOutput(t, tm, "(y/n)")
	press(tm, "y")
	got := waitFile(t, path, func(b []byte) bool { return !strings.Contains(string(b), "privileged") })
	press(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	for _, want := range []string{"# Range for task 7: keep this header.", "# pinned by the range team", "# the agent needs no network"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("comment %q lost:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "privileged") {
		t.Errorf("privileged not removed:\n%s", got)
	}
	if res, err := spec.LintFile(path, spec.Options{}); err != nil || len(res.Findings) != 0 {
		t.Fatalf("fixed file: %v %+v", err, res.Findings)
	}
}

func TestDraftRendersLintCleanForEveryBackend(t *testing.T) {
	for _, backend := range []string{backendDocker, backendK8s, backendProxmox} {
		d := NewDraft()
		d["backend"], d["target"], d["scorer"] = backend, "true", "true"
		res, err := spec.LintBytes(d.DefaultFile(), []byte(d.Render()), spec.Options{})
		if err != nil {
			t.Fatalf("%s: %v\n%s", backend, err, d.Render())
		}
		if len(res.Findings) != 0 || res.Format != d.Format() {
			t.Errorf("%s: format %s findings %+v\n%s", backend, res.Format, res.Findings, d.Render())
		}
		if !strings.Contains(d.Snippet("x"), `type="`+backend+`"`) {
			t.Errorf("%s snippet: %s", backend, d.Snippet("x"))
		}
	}
}

func TestEveryFixRemovesItsWarning(t *testing.T) {
	weak := map[string]func(Draft){
		"CMP-H01":  func(d Draft) { d["privileged"] = "true" },
		"CMP-H06":  func(d Draft) { d["capAdd"] = "SYS_ADMIN,CHOWN" },
		"CMP-H08":  func(d Draft) { d["dropAll"] = "false" },
		"CMP-H13":  func(d Draft) { d["noNewPrivs"] = "false" },
		"CMP-H24":  func(d Draft) { d["readOnly"] = "false" },
		"CMP-H25":  func(d Draft) { d["nonRoot"] = "false" },
		"CMP-H26":  func(d Draft) { d["runtime"] = "runc" },
		"CMP-N03":  func(d Draft) { d["agentNet"] = "bridge" },
		"CMP-R01":  func(d Draft) { d["memory"] = "" },
		"CMP-R03":  func(d Draft) { d["pids"] = "" },
		"HELM-H01": func(d Draft) { d["backend"], d["k8sRuntime"] = backendK8s, "runc" },
		"HELM-N01": func(d Draft) { d["backend"], d["allowDomains"] = backendK8s, "*" },
		"K8S-H01":  func(d Draft) { d["backend"], d["privileged"] = backendK8s, "true" },
		"PVE-N07":  func(d Draft) { d["backend"], d["snat"] = backendProxmox, "true" },
		"PVE-N03":  func(d Draft) { d["backend"], d["firewall"] = backendProxmox, "false" },
		"PVE-H08":  func(d Draft) { d["backend"], d["cpu"] = backendProxmox, "host" },
	}
	for id, weaken := range weak {
		d := NewDraft()
		weaken(d)
		res, err := spec.LintBytes(d.DefaultFile(), []byte(d.Render()), spec.Options{})
		if err != nil || !has(res, id) {
			t.Errorf("%s: weakened draft does not fire (err %v)", id, err)
			continue
		}
		fixes[id].apply(d)
		res, err = spec.LintBytes(d.DefaultFile(), []byte(d.Render()), spec.Options{})
		if err != nil || has(res, id) {
			t.Errorf("%s: fix did not remove it (err %v)", id, err)
		}
	}
}

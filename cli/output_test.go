package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// cli runs the CLI in-process with extra backends over one config and state file.
func cli(t *testing.T, dir string, extra []backends.Backend, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	f.extraBackends = extra
	root := newRootCmd(f)
	root.SetArgs(append([]string{"--config", filepath.Join(dir, "config.yaml"), "--state", filepath.Join(dir, "state.db")}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	f.closeAll()
	return out.String(), errOut.String(), err
}

// sameData fails unless the yaml document decodes to exactly the json one.
func sameData(t *testing.T, what, js, ym string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatalf("%s -o json is not JSON: %v\n%s", what, err, js)
	}
	conv, err := yaml.YAMLToJSON([]byte(ym))
	if err != nil {
		t.Fatalf("%s -o yaml is not YAML: %v\n%s", what, err, ym)
	}
	if err := json.Unmarshal(conv, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: yaml and json carry different data\njson: %s\nyaml: %s", what, js, ym)
	}
	if strings.HasPrefix(strings.TrimSpace(ym), "{") || strings.HasPrefix(strings.TrimSpace(ym), "[") {
		t.Fatalf("%s -o yaml wrote JSON, not block YAML:\n%s", what, ym)
	}
}

// TestYAMLCarriesTheSameDataAsJSON runs every command whose -o json needs no container twice,
// -o json and -o yaml, over the same state, and compares the decoded documents.
func TestYAMLCarriesTheSameDataAsJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.yaml"), "")
	compose := filepath.Join(dir, "compose.yaml")
	writeFile(t, compose, "services:\n  default:\n    image: busybox\n    privileged: true\n    network_mode: host\n")
	db, err := state.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(state.Entry{Time: time.Now(), Operator: "op@host", Action: "snapshot", Target: "pve:a/100", Phase: state.PhaseIntent,
		Params: map[string]string{"name": "before"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutPending(state.Pending{ID: 1, Action: "revert", SandboxID: "pve:a/100", Backend: "pve:a", Started: time.Now(), Steps: []string{"paused"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	pve := func() []backends.Backend {
		b := &chanBackend{name: "pve:a", kind: backends.KindProxmox, evs: make(chan backends.Event, 1)}
		b.evs <- reset(backends.Sandbox{ID: "pve:a/100", Name: "vm-100", Backend: backends.KindProxmox, Endpoint: "pve:a", Task: "ctf",
			Created: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC), Members: []backends.Member{{Name: "vm", Running: true}},
			Findings: []backends.Finding{{RuleID: "PVE-H01", Message: "privileged"}}})
		return []backends.Backend{b}
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"ls", []string{"ls", "--backend", "pve"}},
		{"journal", []string{"journal"}},
		{"recover (list)", []string{"recover"}},
		{"lint", []string{"lint", compose}},
	} {
		t.Run(c.name, func(t *testing.T) {
			js, stderr, err := cli(t, dir, pve(), append(c.args, "-o", "json")...)
			if exitCode(err) > 1 {
				t.Fatalf("-o json: %v\n%s", err, stderr)
			}
			ym, stderr, yerr := cli(t, dir, pve(), append(c.args, "-o", "yaml")...)
			if exitCode(yerr) != exitCode(err) {
				t.Fatalf("-o yaml exits %d, -o json %d: %s", exitCode(yerr), exitCode(err), stderr)
			}
			if c.name == "ls" { // the health line's times differ between two runs
				js, ym = regexp.MustCompile(`"since": "[^"]*"`).ReplaceAllString(js, `"since": ""`),
					regexp.MustCompile(`since: "?[^\n"]*"?`).ReplaceAllString(ym, `since: ""`)
			}
			sameData(t, c.name, js, ym)
		})
	}
}

// TestEveryJSONOutputGoesThroughWriteData keeps -o yaml complete: a command writing JSON by
// itself (writeJSON, json.NewEncoder on f.Out) would offer json without yaml.
func TestEveryJSONOutputGoesThroughWriteData(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	direct := regexp.MustCompile(`writeJSON\(f\.Out|json\.NewEncoder\(f\.Out|report\.JSON\(f\.Out|render\.JSON\(f\.Out`)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "output.go" || name == "lsstream.go" {
			continue // lsstream.go streams -o json; -o yaml of ls goes through writeData
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if loc := direct.FindIndex(src); loc != nil {
			t.Errorf("%s writes JSON to stdout without writeData (no -o yaml): %q", name, src[loc[0]:loc[1]])
		}
	}
}

func TestWriteDataYAMLFollowsTheJSONTags(t *testing.T) {
	type item struct {
		Name    string            `json:"name"`
		Empty   string            `json:"empty,omitempty"`
		When    time.Time         `json:"when"`
		Labels  map[string]string `json:"labels"`
		Skipped string            `json:"-"`
	}
	v := []item{{Name: "a", When: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC), Labels: map[string]string{"k": "v"}, Skipped: "secret-ish"}}
	var js, ym bytes.Buffer
	if err := writeData(&js, "json", v); err != nil {
		t.Fatal(err)
	}
	if err := writeData(&ym, "yaml", v); err != nil {
		t.Fatal(err)
	}
	sameData(t, "writeData", js.String(), ym.String())
	if want := "- labels:\n    k: v\n  name: a\n  when: \"2026-12-03T09:00:00Z\"\n"; ym.String() != want {
		t.Fatalf("yaml:\n%s\nwant:\n%s", ym.String(), want)
	}
}

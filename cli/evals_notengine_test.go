package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/state"
)

// The agent's commands come between what was recorded, by time: a gone sandbox named by its
// full ID needs no engine, its compose project is in the ID, and the trace links it.
func TestTimelineMergesTheAgentsCommandsInTimeOrder(t *testing.T) {
	h := newInspectHost(t)
	const project = "inspect-ctf-iabc123"
	id := "docker:default/" + project
	buf := h.buffer(os.Getpid(), "ctf")
	buf.StartSampleWith(t, "3", 1, "uuid-3", started(false))
	buf.AddEvents(t, "3", 1, it.SandboxExec(3, "ls /root", 0, "ok"), it.SandboxExec(5, "cat /root/flag", 1, "ok"))
	h.trace(os.Getpid(), project, "ctf", "3", 1)
	db, err := state.Open(filepath.Join(h.dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RecordActivity([]sandbox.Activity{{Time: it.T0.Add(4 * time.Second), SandboxID: id, Member: "default",
		Kind: sandbox.ActDie, Detail: "exited with code 137"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out, stderr, err := run(t, "", h.args("timeline", id, "-o", "json")...)
	if err != nil {
		t.Fatalf("timeline: %v\n%s", err, stderr)
	}
	var res struct {
		Entries []state.TimelineEntry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range res.Entries {
		order = append(order, e.Source+":"+e.Detail)
	}
	if got := strings.Join(order, " | "); got != "agent:ls /root | backend:exited with code 137 | agent:cat /root/flag" {
		t.Fatalf("entries in this order: %s", got)
	}
	if a := res.Entries[2].Attrs; a["exit_code"] != "1" || a["sample"] != "3" || a["task"] != "ctf" {
		t.Errorf("the agent's last command: %+v", res.Entries[2])
	}
	out, _, err = run(t, "", h.args("timeline", id, "--source", "backend", "-o", "json")...)
	if err != nil || strings.Contains(out, "/root") || !strings.Contains(out, "137") {
		t.Errorf("--source backend (%v):\n%s", err, out)
	}
	out, _, err = run(t, "", h.args("timeline", id, "--since", "1h", "-o", "json")...)
	if err != nil || strings.Contains(out, "/root") {
		t.Errorf("--since 1h shows commands of August (%v):\n%s", err, out)
	}
}

// With the linkage off, evals has nothing to say (bad input, naming the key) and ls goes on
// without the eval columns' data.
func TestEvalsDisabledIsBadInputAndLsGoesOn(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.yaml"), "inspect:\n  disabled: true\n")
	_, _, err := cli(t, dir, nil, "evals")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "inspect.disabled") {
		t.Fatalf("evals with the linkage off = %v; want exit 2 naming inspect.disabled", err)
	}
	pve := &chanBackend{name: "pve:a", kind: backends.KindProxmox, evs: make(chan backends.Event, 1)}
	pve.evs <- reset(backends.Sandbox{ID: "pve:a/100", Name: "vm-100", Backend: backends.KindProxmox, Endpoint: "pve:a", Inspect: true,
		Members: []backends.Member{{ID: "100", Name: "vm", Running: true, Labels: map[string]string{"vmid": "100"}}}})
	out, stderr, err := cli(t, dir, []backends.Backend{pve}, "ls", "--backend", "pve")
	if err != nil || stderr != "" || !rowHas(out, "vm-100", "-") || !strings.Contains(out, "SAMPLE") {
		t.Fatalf("ls with the linkage off: %v %q\n%s", err, stderr, out)
	}
}

// A Proxmox VM links exactly to the sample whose transcript says the provider made it ready
// (its INFO logger lines, inspect_proxmox_sandbox after 0.11.0), on its node: ls shows it in the
// table and the data, and evals puts it under its sample.
func TestLsAndEvalsLinkAProxmoxVMByTheTranscript(t *testing.T) {
	h := newInspectHost(t)
	buf := h.buffer(os.Getpid(), "pve_ctf")
	buf.StartSampleWith(t, "12", 3, "uuid-12", started(false))
	buf.AddEvents(t, "12", 3, it.Logger(1, "Acquired instance pve-a from pool 'default': host=127.0.0.1 port=8006 node=pve1"),
		it.Logger(2, "VM victim (ID=105) is ready"))
	pve := func() []backends.Backend {
		b := &chanBackend{name: "pve:a", kind: backends.KindProxmox, evs: make(chan backends.Event, 1)}
		b.evs <- reset(
			backends.Sandbox{ID: "pve:a/105", Name: "victim", Backend: backends.KindProxmox, Endpoint: "pve:a", Inspect: true, Actionable: true,
				Members: []backends.Member{{ID: "105", Name: "victim", Running: true, Labels: map[string]string{"vmid": "105", "node": "pve1"}}}},
			backends.Sandbox{ID: "pve:a/106", Name: "other", Backend: backends.KindProxmox, Endpoint: "pve:a", Inspect: true, Actionable: true,
				Members: []backends.Member{{ID: "106", Name: "other", Running: true, Labels: map[string]string{"vmid": "106", "node": "pve1"}}}})
		return []backends.Backend{b}
	}
	out, stderr, err := cli(t, h.dir, pve(), "ls", "--backend", "pve", "-o", "yaml")
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, stderr)
	}
	var res lsResult
	if conv, err := yaml.YAMLToJSON([]byte(out)); err != nil || json.Unmarshal(conv, &res) != nil {
		t.Fatalf("ls -o yaml: %v\n%s", err, out)
	}
	if e := lsEvalOf(t, res, "victim"); e.How != inspectlive.HowExact || e.SampleID != "12" || e.Epoch != 3 || e.Task != "pve_ctf" || !strings.Contains(e.Why, "VM 105") {
		t.Errorf("victim's eval = %+v", e)
	}
	for _, s := range res.Sandboxes {
		if s.Name == "other" && s.Eval != nil {
			t.Errorf("a VM no transcript names is linked: %+v", *s.Eval)
		}
	}
	table, _, err := cli(t, h.dir, pve(), "ls", "--backend", "pve")
	if err != nil || !rowHas(table, "victim", "pve_ctf", "12 #3 (exact)") || !rowHas(table, "other", "-") {
		t.Errorf("ls table (%v):\n%s", err, table)
	}
	out, stderr, err = cli(t, h.dir, pve(), "evals", "-o", "json")
	if err != nil {
		t.Fatalf("evals: %v\n%s", err, stderr)
	}
	var ev evalsResult
	if err := json.Unmarshal([]byte(out), &ev); err != nil || len(ev.Evals) != 1 || len(ev.Evals[0].Samples) != 1 {
		t.Fatalf("evals: %v\n%s", err, out)
	}
	if sbs := ev.Evals[0].Samples[0].Sandboxes; len(sbs) != 1 || sbs[0].ID != "pve:a/105" || sbs[0].How != inspectlive.HowExact {
		t.Errorf("sample 12's sandboxes = %+v", sbs)
	}
}

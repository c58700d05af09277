package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
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
	buf.startSample(t, "3", 1, "uuid-3")
	buf.exec(t, "3", 1, 3, "ls /root", 0)
	buf.exec(t, "3", 1, 5, "cat /root/flag", 1)
	h.trace(os.Getpid(), project, "ctf", "3", 1)
	db, err := state.Open(filepath.Join(h.dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RecordActivity([]sandbox.Activity{{Time: fixtureT0.Add(4 * time.Second), SandboxID: id, Member: "default",
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

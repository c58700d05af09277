package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// plantedSecrets are credential values in the shapes operators' ranges hold them.
var plantedSecrets = []string{"sk-rkviewplanted0123456789abcdef", "ghp_rkviewplanted0123456789abcdefghij", "hunter2RKVIEWPLANTED"}

// TestNoPlantedSecretInAnyView plants credentials where the workbench shows text that came from
// a backend or the state file (a sandbox's labels and extra fields, a member's labels, journal
// parameters and errors, a failing action's error), renders the screens the golden files cover
// (fleet, expanded row, detail, journal, :snapshots, the status line after the failure) and
// greps every frame: no planted value may appear.
func TestNoPlantedSecretInAnyView(t *testing.T) {
	h := newHarness(t, harnessOpts{w: 160, h: 50, setup: func(d *fakeBackend) {
		sb := &d.fleet[0]
		sb.Labels = map[string]string{"OPENAI_API_KEY": plantedSecrets[0], "com.docker.compose.project": sb.Name}
		sb.Extra = append(sb.Extra, backends.KeyValue{Key: "AWS_SECRET_ACCESS_KEY", Value: plantedSecrets[2]},
			backends.KeyValue{Key: "note", Value: "Authorization: Bearer " + plantedSecrets[1]})
		for i := range sb.Members {
			sb.Members[i].Labels = map[string]string{"DB_PASSWORD": plantedSecrets[2]}
		}
		d.failWith = errors.New("engine said no: token=" + plantedSecrets[1] + " password=" + plantedSecrets[2])
	}, setupDB: func(db *state.DB) {
		journalFixture(db)
		if _, err := db.Append(state.Entry{Time: t0, Operator: "op@host", Action: "exec", Target: "docker:test/inspect-ctf-web-iabc123",
			Phase: state.PhaseOutcome, Intent: 1, Outcome: state.OutcomeFailed, Params: map[string]string{"api_key": plantedSecrets[0], "cmd": "curl -H 'Authorization: Bearer " + plantedSecrets[1] + "'"},
			Error: "exit 1: --password " + plantedSecrets[2]}); err != nil {
			t.Fatal(err)
		}
	}})
	var frames []string
	grab := func(s string) { frames = append(frames, s) }
	grab(h.waitText("inspect-ctf-web-iabc123"))
	h.key("j", "e")
	grab(h.waitText("- svc1"))
	h.key("e", "s", "enter")
	grab(h.waitFor("the failed snapshot on the status line", func(s string) bool { return strings.Contains(s, "engine said no") }))
	h.key("enter")
	grab(h.waitText("MEMBERS ("))
	h.key("esc", "@")
	grab(h.waitText("disk full"))
	for range 6 { // walk the entries: the selected one is spelled out in full
		h.key("j")
		grab(h.frame())
	}
	h.key("esc", ":")
	h.typeText("snapshots")
	h.key("enter")
	grab(h.waitText("snapshots"))
	hits := 0
	for _, f := range frames {
		for _, s := range plantedSecrets {
			if strings.Contains(f, s) {
				hits++
				t.Errorf("planted secret %q… rendered:\n%s", s[:8], f)
			}
		}
	}
	t.Logf("grepped %d frames for %d planted secrets: %d hits", len(frames), len(plantedSecrets), hits)
}

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// TestTeamWatchOverTwoSSHSessions is a team during a live eval: `rangekeeper serve` and two
// operators on the system's ssh client under tmux, alice (operator) and bob (viewer), both
// watching one hardened sandbox. `docker network connect` of an egress network onto its agent
// raises the daemon's one containment alert on both screens (the time each took is logged:
// speed targets are benchmarks here, and this machine is shared). bob types `:quarantine` and
// the action layer refuses him, journaled; alice acknowledges the alert (shared: bob's row
// loses its mark) and quarantines the sandbox; bob's row shows Q, and the journal names her.
func TestTeamWatchOverTwoSSHSessions(t *testing.T) {
	tmux, sshBin := need(t), needSSH(t)
	cli := dockertest.Engine(t)
	ctx := context.Background()
	dir := t.TempDir()
	bin := buildWorkbench(t)
	project := "inspect-e2etw-i" + dockertest.RunID
	egress := hardenedWithEgress(t, cli, project)

	alice := newTeamOperator(t, dir, "alice", "operator")
	bob := newTeamOperator(t, dir, "bob", "viewer")
	r := startTeam(t, bin, dir, alice, bob)
	pa := r.ssh(tmux, sshBin, "rk-e2etwa-"+dockertest.RunID, alice, 160, 40)
	pb := r.ssh(tmux, sshBin, "rk-e2etwb-"+dockertest.RunID, bob, 160, 40)
	for _, p := range []pane{pa, pb} {
		p.wait("team: alice bob", 30*time.Second)
		p.wait(project, 30*time.Second)
		p.keys("/")
		p.literal("name=" + project)
		p.keys("Enter")
		p.wait("filter:name="+project, 10*time.Second)
	}
	time.Sleep(time.Second) // the watch records the sandbox's baseline at its first sight

	start := time.Now()
	if _, err := cli.NetworkConnect(ctx, egress, client.NetworkConnectOptions{Container: project + "-default-1"}); err != nil {
		t.Fatal(err)
	}
	// Other tests share this engine: wait for our row's mark, on both screens.
	marked := regexp.MustCompile(`(?m)^\s*!\+docker:\S+\s+` + regexp.QuoteMeta(project))
	for _, s := range []struct {
		who string
		p   pane
	}{{"alice", pa}, {"bob", pb}} {
		screen := s.p.waitRe(marked, 10*time.Second)
		t.Logf("%s's row marked %s after the connect", s.who, time.Since(start))
		if !regexp.MustCompile(`ALERT HIGH \S+: `).MatchString(screen) {
			t.Errorf("%s's screen has no alert line:\n%s", s.who, screen)
		}
	}

	// bob may not quarantine: the verb reaches the action layer, which refuses and journals it.
	pb.keys(":")
	pb.literal("quarantine")
	pb.keys("Enter")
	pb.wait("quarantine "+project+"?", 10*time.Second)
	pb.keys("y", "Enter") // y moves to OK
	pb.wait("bob is viewer", 10*time.Second)

	// alice acknowledges the alert from her sandbox's alerts (other tests' sandboxes on this
	// engine raise their own: the mark leaves both rows), then quarantines.
	pa.keys(":")
	pa.literal("alerts " + project)
	pa.keys("Enter")
	pa.waitRe(regexp.MustCompile(`(?m)^alerts\s+\(`), 10*time.Second)
	pa.keys("A")
	pa.keys("Escape")
	pa.wait("sandboxes  sort:", 10*time.Second)
	pa.keys("Q")
	pa.wait("quarantine "+project+"?", 10*time.Second)
	pa.keys("y", "Enter")
	pa.wait("quarantine "+project+" done", 60*time.Second)
	pb.waitRe(regexp.MustCompile(`(?m)^\s*Q\+?docker:\S+\s+`+regexp.QuoteMeta(project)), 10*time.Second)

	// The daemon's one recorder kept the timeline: the connect is in it, read beside the daemon.
	tc := exec.Command(bin, "--state", r.statePath, "timeline", project, "-o", "json")
	tc.Env = r.env
	tl, err := tc.Output()
	if err != nil {
		t.Fatalf("timeline beside the daemon: %v", err)
	}
	var doc struct {
		Entries []struct{ Source, Kind, Detail string }
	}
	if err := json.Unmarshal(tl, &doc); err != nil {
		t.Fatalf("timeline -o json: %v\n%s", err, tl)
	}
	connected := false
	for _, e := range doc.Entries {
		connected = connected || e.Source == state.SourceBackend && strings.Contains(e.Kind+" "+e.Detail, egress)
	}
	if !connected {
		t.Errorf("the daemon's timeline lacks the connect of %s:\n%s", egress, tl)
	}

	es, out := r.journal()
	var refused, quarantined, acked bool
	for _, e := range es {
		switch {
		case e.Action == "quarantine" && e.Phase == state.PhaseOutcome && e.Outcome == state.OutcomeRefused:
			refused = refused || e.Operator == "bob" && e.Transport == "ssh" && e.Fingerprint == bob.fp
		case e.Action == "quarantine" && e.Outcome == state.OutcomeOK:
			quarantined = quarantined || e.Operator == "alice" && e.Transport == "ssh" && e.Fingerprint == alice.fp
		case e.Action == "alert-ack" && e.Outcome == state.OutcomeOK:
			acked = acked || e.Operator == "alice"
		}
	}
	if !refused || !quarantined || !acked {
		t.Errorf("journal: bob's refused quarantine %v, alice's quarantine %v, alice's ack %v; want all:\n%s", refused, quarantined, acked, out)
	}
}

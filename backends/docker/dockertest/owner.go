package dockertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// owner is this process as LabelOwner names it.
var owner = processID(os.Getpid())

// processID names a live process by its PID and start time (field 22 of /proc/PID/stat), so a
// reused PID does not pass for the process that labelled a resource; "" when /proc cannot say.
func processID(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return fmt.Sprintf("%d:%s", pid, f[19]) // field 22 is the 20th after the name
}

// ownerAlive reports whether the process a LabelOwner value names still runs. Values it cannot
// read count as alive: only runs known to be dead are swept.
func ownerAlive(label string) bool {
	var pid int
	if _, err := fmt.Sscanf(label, "%d:", &pid); err != nil || pid <= 0 {
		return true
	}
	return processID(pid) == label
}

// SweepDead removes the containers, networks, volumes and images of every test run whose owning
// process has ended, leaving live runs' alone. Resources without an owner label (made before it
// existed) are left too. Test images are per run (their repository or tag names it), so no live
// run uses an image a dead one built.
func SweepDead() {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return
	}
	defer cli.Close()
	for _, run := range deadRuns(cli) {
		removeLabelled(cli, LabelRun+"="+run, true)
	}
}

// deadRuns lists the runs none of whose labelled resources has a live owner. A run's resources
// may have several owners: a test's child process adopts its parent's run (verify/dockerstage's
// signal tests), and may die while the parent still counts what it left.
func deadRuns(cli *client.Client) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := make(client.Filters).Add("label", LabelTest+"=1").Add("label", LabelOwner)
	dead := map[string]bool{} // run → no live owner seen yet
	for _, r := range listLabelled(ctx, cli, f, true) {
		run, own := r.labels[LabelRun], r.labels[LabelOwner]
		if run == "" || run == RunID {
			continue
		}
		alive := ownerAlive(own)
		if d, seen := dead[run]; !seen || d {
			dead[run] = !alive
		}
	}
	var out []string
	for run, d := range dead {
		if d {
			out = append(out, run)
		}
	}
	return out
}

package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
)

// recoverProbe removes what a probe cut short may have left in the member (its record names
// every place it tried): as root, with rm, else with the probe binary's own --remove-self.
func recoverProbe(ctx context.Context, b backends.Backend, rec state.Pending) (string, error) {
	var plan probe.Placement
	if len(rec.Plan) == 0 {
		return "nothing to remove: the probe had placed nothing", nil
	}
	if err := json.Unmarshal(rec.Plan, &plan); err != nil {
		return "", fmt.Errorf("probe record %d: %w", rec.ID, err)
	}
	ex, ok := b.(backends.Executor)
	if b == nil || !ok {
		return "", fmt.Errorf("probe record %d: the backend cannot exec to remove %s", rec.ID, strings.Join(plan.Paths, ", "))
	}
	var removed, left []string
	for _, p := range plan.Paths {
		if !strings.Contains(p, ".rangekeeper-probe-") {
			continue // never remove a path the probe did not name itself
		}
		gone := false
		for _, cmd := range [][]string{{"rm", "-rf", "--", p}, {p, "--remove-self", "--version"}} {
			out, err := ex.Exec(ctx, rec.SandboxID, backends.ExecRequest{Member: plan.Member, User: "0", Cmd: cmd, Timeout: 10 * time.Second})
			if errors.Is(err, backends.ErrNotFound) || err != nil && strings.Contains(err.Error(), "No such container") {
				return "nothing to remove: the sandbox member is gone", nil
			}
			if err == nil && out.ExitCode == 0 {
				gone = true
				break
			}
		}
		if gone {
			removed = append(removed, p)
		} else {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		return "", fmt.Errorf("probe leftovers not removed from %s: %s", plan.Member, strings.Join(left, ", "))
	}
	if len(removed) == 0 {
		return "nothing to remove", nil
	}
	return "removed " + strings.Join(removed, ", "), nil
}

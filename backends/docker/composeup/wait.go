package composeup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// pollInterval is how often readiness is re-checked; healthchecks themselves run at the spec's
// interval, so polling faster than this only costs engine calls.
const pollInterval = 200 * time.Millisecond

// Wait blocks until every container of the stack is running — and healthy where it has a
// healthcheck — or has completed successfully when a dependent waits for that. It fails fast
// when a container exits or turns unhealthy, and with the context's deadline otherwise (the
// error then names what was not ready).
func Wait(ctx context.Context, cli *client.Client, st *Stack) error {
	st.mu.Lock()
	all := append([]Container(nil), st.Containers...)
	st.mu.Unlock()
	// A container counts as ready once it was ready in two polls in a row, so one that exits
	// right after starting is caught here rather than by the probe.
	seen := map[string]int{}
	var prevState []string
	for {
		var lastState []string
		settled := true
		for _, c := range all {
			ok, state, err := ready(ctx, cli, c, st.awaited[c.Service])
			if err != nil && ctx.Err() != nil {
				// The deadline fell inside an engine call: report what the last poll saw.
				if len(prevState) == 0 {
					prevState = []string{"not polled yet"}
				}
				return fmt.Errorf("not ready (%s): %w", strings.Join(prevState, ", "), ctx.Err())
			}
			if err != nil {
				return err
			}
			if !ok {
				seen[c.ID] = 0
				settled = false
				lastState = append(lastState, fmt.Sprintf("%s %s", c.Name, state))
				continue
			}
			if seen[c.ID]++; seen[c.ID] < 2 {
				settled = false
			}
		}
		if settled {
			return nil
		}
		prevState = lastState
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready (%s): %w", strings.Join(lastState, ", "), ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// waitContainer waits for one container: running (and healthy), or exited 0 when completion is
// what a dependent needs.
func waitContainer(ctx context.Context, cli *client.Client, c Container, completion bool) error {
	for {
		ok, state, err := ready(ctx, cli, c, completion)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is %s: %w", c.Name, state, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// ready reports whether c is ready, its state for messages, and a NotReadyError when it never
// will be.
func ready(ctx context.Context, cli *client.Client, c Container, completion bool) (bool, string, error) {
	res, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return false, "", fmt.Errorf("inspect %s: %w", c.Name, err)
	}
	s := res.Container.State
	if s == nil {
		return false, "unknown", nil
	}
	health := ""
	if s.Health != nil {
		health = string(s.Health.Status)
	}
	nr := &NotReadyError{Service: c.Service, Name: c.Name, State: string(s.Status), Health: health, ExitCode: s.ExitCode}
	switch {
	case s.Status == container.StateExited && completion && s.ExitCode == 0:
		return true, "completed", nil
	case s.Status == container.StateExited || s.Status == container.StateDead:
		return false, "", nr
	case s.Status != container.StateRunning:
		return false, string(s.Status), nil
	case health == string(container.Unhealthy):
		return false, "", nr
	case health == string(container.Starting):
		return false, "starting (healthcheck)", nil
	case completion:
		return false, "running (waiting for it to complete)", nil
	}
	return true, "running", nil
}

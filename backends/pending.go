package backends

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// PendingAction is the write-ahead record of a multi-step action (see sandbox.PendingAction).
type PendingAction = sandbox.PendingAction

// ErrInterrupted marks an action error that left the sandbox half-done: the write-ahead record
// stays, and the next action on the sandbox (or `rangekeeper recover`) finishes it.
var ErrInterrupted = errors.New("interrupted")

// Recoverer finishes or rolls back an action that was cut short, from its write-ahead record,
// even when the sandbox has no member left. It says what it did ("rolled back: …",
// "completed: …"). Every step is repeatable, so a recovery cut short is recovered again.
type Recoverer interface {
	Recover(ctx context.Context, rec PendingAction) (string, error)
}

type planKey struct{}

// WithPlan returns a context whose actions record their plan through save before their first
// destructive step (the action layer writes it into the action's write-ahead record).
func WithPlan(ctx context.Context, save func(plan json.RawMessage) error) context.Context {
	return context.WithValue(ctx, planKey{}, save)
}

// RecordPlan saves an action's plan durably before it changes anything; an action whose plan
// cannot be saved must not start. Without a recorder (a caller outside the action layer) it is
// a no-op.
func RecordPlan(ctx context.Context, plan any) error {
	save, ok := ctx.Value(planKey{}).(func(json.RawMessage) error)
	if !ok || save == nil {
		return nil
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	return save(raw)
}

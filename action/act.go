package action

import (
	"context"
	"fmt"

	"github.com/rangekeeper/rangekeeper/backends"
)

// plain are the kinds that need nothing but the sandbox: Act runs them, so a workbench key can
// take them with the generic flow (confirm when the kind asks, then act). A new kind without
// options is its declaration, its backend call, its helper here and one line below.
var plain = map[backends.Action]func(l *Layer, ctx context.Context, req Request) (string, error){
	backends.ActionReset: func(l *Layer, ctx context.Context, req Request) (string, error) { return "reset", l.Reset(ctx, req) },
	backends.ActionQuarantine: func(l *Layer, ctx context.Context, req Request) (string, error) {
		return "quarantined", l.Quarantine(ctx, req)
	},
	backends.ActionRelease: func(l *Layer, ctx context.Context, req Request) (string, error) {
		return "released", l.Release(ctx, req)
	},
}

// Plain reports whether Act can take kind a (it needs no options).
func Plain(a backends.Action) bool { _, ok := plain[a]; return ok }

// Act takes req.Action, a kind that needs no options (Plain), through its typed helper, and
// says what it did ("quarantined").
func (l *Layer) Act(ctx context.Context, req Request) (string, error) {
	run, ok := plain[req.Action]
	if !ok {
		return "", fmt.Errorf("%s: takes options; use its own helper: %w", req.Action, ErrUnsupported)
	}
	return run(l, ctx, req)
}

package backends

import (
	"context"
	"fmt"
)

type progressKey struct{}

// WithProgress returns a context whose actions report their steps to fn (e.g. "waiting for
// service discovery: b"). The CLI prints them; the action layer shows them on the task.
func WithProgress(ctx context.Context, fn func(step string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// Progress reports a step of a running action to the context's reporter, if any.
func Progress(ctx context.Context, format string, args ...any) {
	if fn, ok := ctx.Value(progressKey{}).(func(string)); ok && fn != nil {
		fn(fmt.Sprintf(format, args...))
	}
}

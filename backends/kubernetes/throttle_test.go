package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestThrottledPastDeadlineKnowsTheRateLimitersRefusal: client-go's rate limiter refuses, before
// the deadline, a wait that would end after it; a snapshot poll bounded by that deadline must
// read it as the deadline reached (it once surfaced as an API error, without what it waited for).
func TestThrottledPastDeadlineKnowsTheRateLimitersRefusal(t *testing.T) {
	l := rate.NewLimiter(rate.Every(time.Hour), 1)
	l.Allow() // the burst is spent: the next token is an hour away
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	werr := l.Wait(ctx)
	if werr == nil || ctx.Err() != nil {
		t.Fatalf("limiter wait = %v with ctx %v; want an early refusal", werr, ctx.Err())
	}
	// As client-go's request wraps it.
	err := fmt.Errorf("client rate limiter Wait returned an error: %w", werr)
	if !throttledPastDeadline(err) {
		t.Errorf("throttledPastDeadline(%q) = false", err)
	}
	for _, other := range []error{errors.New(`volumesnapshots "x" not found`), context.Canceled, errors.New("connection refused")} {
		if throttledPastDeadline(other) {
			t.Errorf("throttledPastDeadline(%q) = true", other)
		}
	}
}

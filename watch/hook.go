package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/state"
)

// HookOK is the recorded outcome of a hook that exited 0 in time.
const HookOK = "ok"

// MaxHooks bounds the hooks running at once; an alert past it records that its hook was skipped
// rather than queue behind a hook that hangs.
const MaxHooks = 8

// hookRunner runs the alert hook: the alert as JSON on stdin, a timeout, its outcome reported
// through done. It never blocks the watch.
type hookRunner struct {
	argv    []string
	timeout time.Duration
	done    func(id uint64, result string)

	mu      sync.Mutex
	running int
	wg      sync.WaitGroup
}

func (h *hookRunner) run(a state.Alert) {
	if len(h.argv) == 0 {
		return
	}
	h.mu.Lock()
	if h.running >= MaxHooks {
		h.mu.Unlock()
		h.done(a.ID, fmt.Sprintf("skipped: %d hooks still running", MaxHooks))
		return
	}
	h.running++
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		result := h.exec(a)
		h.mu.Lock()
		h.running--
		h.mu.Unlock()
		h.done(a.ID, result)
	}()
}

func (h *hookRunner) exec(a state.Alert) string {
	body, err := json.Marshal(a)
	if err != nil {
		return "failed: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.argv[0], h.argv[1:]...)
	cmd.Stdin = bytes.NewReader(redact.Bytes(body))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Sprintf("failed: timed out after %s", h.timeout)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 200 {
			msg = msg[:200]
		}
		if msg != "" {
			return "failed: " + err.Error() + ": " + redact.Message(msg)
		}
		return "failed: " + err.Error()
	}
	return HookOK
}

func (h *hookRunner) wait() { h.wg.Wait() }

package proxmox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"
)

// transient reports whether a failed read may succeed when repeated: transport errors and 5xx
// answers other than PVE's "does not exist" family and guest-agent verdicts.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ae *pve.APIError
	if errors.As(err, &ae) {
		if ae.StatusCode < 500 || pve.IsNotFound(err) {
			return false
		}
		m := ae.Message
		for _, permanent := range []string{"Agent error", "guest agent", "is not running", "does not exist"} {
			if strings.Contains(m, permanent) {
				return false
			}
		}
		return true
	}
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &badHost) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return false // TLS verification fails the same way every time
	}
	return true // transport: reset, EOF, refused, timeout
}

// get is an idempotent read retried on transient failures.
func (b *Backend) get(ctx context.Context, path string, v any) error {
	var err error
	delay := 20 * time.Millisecond
	for attempt := 0; attempt < 5; attempt++ {
		if err = b.client.Get(ctx, path, v); !transient(err) {
			return err
		}
		if err := sleep(ctx, delay); err != nil {
			return err
		}
		delay *= 2
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// apiMessage is the operator-facing text of a PVE error (its message and per-parameter errors).
func apiMessage(err error) string {
	var ae *pve.APIError
	if errors.As(err, &ae) {
		msg := strings.TrimSpace(ae.Message)
		if len(ae.Errors) > 0 {
			var parts []string
			for k, v := range ae.Errors {
				parts = append(parts, k+": "+strings.TrimSpace(v))
			}
			msg += " (" + strings.Join(parts, "; ") + ")"
		}
		return fmt.Sprintf("%s (HTTP %d)", msg, ae.StatusCode)
	}
	return err.Error()
}

// TaskError is a PVE task that finished unsuccessfully; Message is the task log's error line.
type TaskError struct {
	UPID    string
	What    string
	Message string
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("%s failed: %s (task %s)", e.What, e.Message, e.UPID)
}

// waitTask polls a task's status until it stops, the deadline passes or ctx ends, tolerating
// transient read failures; on failure it reports the task log's "TASK ERROR:" line.
func (b *Backend) waitTask(ctx context.Context, upid pve.UPID, what string) error {
	if upid == "" {
		return fmt.Errorf("%s: PVE returned no task id", what)
	}
	if strings.Count(string(upid), ":") < 8 {
		// go-proxmox's NewTask indexes field 7 and panics on a short UPID.
		return fmt.Errorf("%s: malformed task id %q", what, upid)
	}
	task := pve.NewTask(upid, b.client)
	ctx, cancel := context.WithTimeout(ctx, b.taskTimeout)
	defer cancel()
	interval, failures := 25*time.Millisecond, 0
	for {
		err := task.Ping(ctx)
		switch {
		case err == nil:
			failures = 0
			if task.IsCompleted {
				if task.IsSuccessful {
					return nil
				}
				return &TaskError{UPID: string(upid), What: what, Message: b.taskFailure(ctx, task)}
			}
		case ctx.Err() != nil:
			return b.waitEnded(ctx, upid, what)
		case transient(err) && failures < 8:
			failures++
		default:
			return fmt.Errorf("%s: reading task %s: %s", what, upid, apiMessage(err))
		}
		if err := sleep(ctx, interval); err != nil {
			return b.waitEnded(ctx, upid, what)
		}
		interval = min(interval*2, time.Second)
	}
}

func (b *Backend) waitEnded(ctx context.Context, upid pve.UPID, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: task %s still running after %s; it may finish on PVE later", what, upid, b.taskTimeout)
	}
	return fmt.Errorf("%s: %w", what, ctx.Err())
}

// taskFailure returns the last "TASK ERROR:" line of the log, or the exit status.
func (b *Backend) taskFailure(ctx context.Context, task *pve.Task) string {
	var log []map[string]any
	path := fmt.Sprintf("/nodes/%s/tasks/%s/log?start=0&limit=1000", url.PathEscape(task.Node), task.UPID)
	if err := b.get(ctx, path, &log); err == nil {
		for i := len(log) - 1; i >= 0; i-- {
			if t, _ := log[i]["t"].(string); strings.HasPrefix(t, "TASK ERROR: ") {
				return strings.TrimPrefix(t, "TASK ERROR: ")
			}
		}
	}
	return task.ExitStatus
}

// post sends a mutating request returning a UPID and waits for the task.
func (b *Backend) post(ctx context.Context, path string, body any, what string) error {
	var upid pve.UPID
	if err := b.client.Post(ctx, path, body, &upid); err != nil {
		return fmt.Errorf("%s: %s", what, apiMessage(err))
	}
	return b.waitTask(ctx, upid, what)
}

package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// QuarantineStore keeps what a quarantine changed until release (*state.DB).
type QuarantineStore interface {
	PutQuarantine(rec state.QuarantineRecord) error
	Quarantine(sandboxID string) (state.QuarantineRecord, bool, error)
	DeleteQuarantine(sandboxID string) error
}

// ErrQuarantine refuses a quarantine of a quarantined sandbox and a release of one that is not.
var ErrQuarantine = errors.New("refused")

func (l *Layer) quarantines() (QuarantineStore, error) {
	if qs, ok := l.journal.(QuarantineStore); ok {
		return qs, nil
	}
	return nil, fmt.Errorf("quarantine: no state file to keep its record in: %w", ErrUnsupported)
}

// Quarantine cuts a sandbox off from everything outside itself (confirmed, refused in read-only
// mode, journaled). What it changes is recorded in the state file before the first change, so
// Release restores exactly that.
func (l *Layer) Quarantine(ctx context.Context, req Request) error {
	req.Action = backends.ActionQuarantine
	qs, err := l.quarantines()
	if err != nil {
		return err
	}
	operator := l.whoIn(ctx, req).Operator
	return l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		if rec, ok, err := qs.Quarantine(req.SandboxID); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%s: %w: quarantined already (since %s by %s); release it first", sb.Name, ErrQuarantine, rec.Time.Local().Format(time.DateTime), rec.Operator)
		}
		return b.(backends.Quarantiner).Quarantine(ctx, req.SandboxID, func(plan []byte) error {
			return qs.PutQuarantine(state.QuarantineRecord{SandboxID: req.SandboxID, Backend: b.Name(), Operator: operator, Time: time.Now().UTC(), Plan: plan})
		})
	})
}

// Release restores what a quarantine of the sandbox changed (confirmed, refused in read-only
// mode, journaled). The record is kept if the restore fails, so release can be retried.
func (l *Layer) Release(ctx context.Context, req Request) error {
	req.Action = backends.ActionRelease
	qs, err := l.quarantines()
	if err != nil {
		return err
	}
	return l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		rec, ok, err := qs.Quarantine(req.SandboxID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: %w: not quarantined", sb.Name, ErrQuarantine)
		}
		if err := b.(backends.Quarantiner).Release(ctx, req.SandboxID, rec.Plan); err != nil {
			return err
		}
		return qs.DeleteQuarantine(req.SandboxID)
	})
}

// Package timeline records what happens to watched sandboxes: it follows the supervisor's
// activity log and the fleet's live posture and writes them to the state file, with
// rangekeeper's own recording sessions so the timeline shows where nothing was recorded
// because rangekeeper was not running. Engines keep their events briefly; this is the memory.
package timeline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
)

// Recorder writes the timeline while it runs.
type Recorder struct {
	Sup       *supervisor.Supervisor
	DB        *state.DB
	Retention state.Retention
	// Heartbeat is how often the session's last-alive time is written (the end of a gap when
	// rangekeeper is killed); 0: 30 s. Posture is compared with the last seen at the same pace.
	Heartbeat time.Duration
	Now       func() time.Time // nil: time.Now

	flushMu sync.Mutex // Flush (tests, reports) runs beside Run's own flushes
	cursor  uint64
	posture map[string]string // sandbox ID → summary of its findings
	seen    supervisor.Seen   // the fleet versions of the last check
	lost    uint64
}

// Run records until ctx ends, then closes the session cleanly. It returns the first write error.
func (r *Recorder) Run(ctx context.Context) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Heartbeat <= 0 {
		r.Heartbeat = 30 * time.Second
	}
	r.posture, r.seen = map[string]string{}, supervisor.Seen{}
	sess := state.Session{Start: r.Now().UTC(), Last: r.Now().UTC()}
	if err := r.DB.RecordSession(sess); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	if _, err := r.DB.PruneTimeline(r.Retention, r.Now()); err != nil {
		return fmt.Errorf("timeline: prune: %w", err)
	}
	tick := time.NewTicker(r.Heartbeat)
	defer tick.Stop()
	for {
		notify := r.Sup.ActivityNotify()
		if err := r.flush(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			err := r.flush()
			sess.Last, sess.Clean = r.Now().UTC(), true
			if serr := r.DB.RecordSession(sess); err == nil {
				err = serr
			}
			return err
		case <-notify:
		case <-tick.C:
			sess.Last = r.Now().UTC()
			if err := r.DB.RecordSession(sess); err != nil {
				return fmt.Errorf("timeline: %w", err)
			}
			if err := r.checkPosture(); err != nil {
				return err
			}
		}
	}
}

// Lost is how many activity entries were lost because the recorder fell behind the supervisor's
// bounded log.
func (r *Recorder) Lost() uint64 {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.lost
}

func (r *Recorder) flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	acts, next, lost := r.Sup.Activity(r.cursor)
	r.cursor, r.lost = next, r.lost+lost
	if err := r.DB.RecordActivity(acts); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	return nil
}

// Flush records what the supervisor has logged so far (tests, and before a report).
func (r *Recorder) Flush() error { return r.flush() }

// checkPosture records a posture entry for every sandbox whose findings changed since last seen.
func (r *Recorder) checkPosture() error {
	var changed []state.SandboxEntry
	for _, b := range r.Sup.Backends() {
		fleet, ok := r.seen.Changed(r.Sup, b.Name())
		if !ok {
			continue // nothing of this backend changed since the last check
		}
		for _, sb := range fleet {
			if !sb.Actionable || sb.PosturePending != "" {
				continue // a pending posture is not a change, nor a first posture
			}
			sum := postureSummary(sb.Findings)
			prev, seen := r.posture[sb.ID]
			r.posture[sb.ID] = sum
			if seen && prev == sum {
				continue
			}
			detail := "posture: " + sum
			if seen {
				detail = fmt.Sprintf("posture changed: %s (was %s)", sum, prev)
			}
			changed = append(changed, state.SandboxEntry{SandboxID: sb.ID,
				Entry: state.TimelineEntry{Time: r.Now().UTC(), Source: state.SourcePosture, Kind: "posture", Detail: detail}})
		}
	}
	if err := r.DB.RecordTimeline(changed...); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	return nil
}

// CheckPosture compares the fleet's posture now (tests).
func (r *Recorder) CheckPosture() error {
	if r.posture == nil {
		r.posture, r.seen = map[string]string{}, supervisor.Seen{}
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r.checkPosture()
}

func postureSummary(fs []backends.Finding) string {
	if len(fs) == 0 {
		return "no findings"
	}
	seen := map[string]bool{}
	var ids []string
	for _, f := range fs {
		if !seen[f.RuleID] {
			seen[f.RuleID] = true
			ids = append(ids, f.RuleID)
		}
	}
	sort.Strings(ids)
	return fmt.Sprintf("%d findings (%s)", len(fs), strings.Join(ids, " "))
}

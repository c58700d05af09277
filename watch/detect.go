// Package watch is the containment watch: it compares every running sandbox's live posture with
// its baseline (recorded when first seen and after a probe or verify) and raises an alert, with
// its evidence, when a sandbox weakens or when a process is started inside it.
package watch

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// Reasons a baseline is recorded.
const (
	ReasonFirstSeen = "first seen"
	ReasonProbe     = "probe"
	ReasonVerify    = "verify"
	ReasonRelease   = "release"
)

// recentPerSandbox bounds the activities kept per sandbox as evidence.
const recentPerSandbox = 8

// causeWait bounds how long an alert about a network waits for the event that joined the member
// to it. The engine's event stream can lag its inspect data under load: the re-read that follows
// an older event already shows the new network, and naming that older event as the cause would
// send the operator after the wrong change. After the wait the alert is raised without a cause.
const causeWait = 5 * time.Second

// heldAlert is a drift alert waiting for its cause.
type heldAlert struct {
	alert   state.Alert
	finding sandbox.Finding
	until   time.Time
}

// detector is the pure core: baselines in memory, the last activities per sandbox, and the
// comparison. It is not safe for concurrent use; Watcher serialises it.
type detector struct {
	min    sandbox.Severity
	base   map[string]*state.Baseline
	recent map[string][]backends.Activity
	last   map[string][]sandbox.Finding // the last posture seen, for rebaselining
	dirty  map[string]bool              // baselines to write
	held   []heldAlert                  // alerts waiting for their cause, oldest first
}

func newDetector(min sandbox.Severity, stored []state.Baseline) *detector {
	d := &detector{min: min, base: map[string]*state.Baseline{}, recent: map[string][]backends.Activity{},
		last: map[string][]sandbox.Finding{}, dirty: map[string]bool{}}
	for i := range stored {
		b := stored[i]
		d.base[b.SandboxID] = &b
	}
	return d
}

// findingKey identifies a finding across refreshes: the rule, the member and the evidence (one
// rule fires once per network, mount or capability).
func findingKey(f sandbox.Finding) string { return f.RuleID + "\x00" + f.Member + "\x00" + f.Evidence }

func describe(f sandbox.Finding) string {
	s := fmt.Sprintf("%s %s", strings.ToUpper(f.Severity.String()), f.RuleID)
	if f.Member != "" {
		s += " on " + f.Member
	}
	s += ": " + f.Message
	if f.Evidence != "" {
		s += " (" + f.Evidence + ")"
	}
	return s
}

// activity records one activity as evidence and returns the alert it raises on its own (an
// exec), if any.
func (d *detector) activity(a backends.Activity) *state.Alert {
	r := append(d.recent[a.SandboxID], a)
	if len(r) > recentPerSandbox {
		r = r[len(r)-recentPerSandbox:]
	}
	d.recent[a.SandboxID] = r
	if a.Kind != sandbox.ActExec {
		return nil
	}
	user, cmd := a.Attrs["user"], a.Attrs["command"]
	priv := a.Attrs["privileged"] == "true"
	sev := catalog.SeverityLow
	if user == "0" || user == "root" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root:") {
		sev = catalog.SeverityMedium
	}
	if priv {
		sev = catalog.SeverityHigh
	}
	summary := fmt.Sprintf("exec %s as user %s in %s (arguments not recorded)", orUnknown(cmd), orUnknown(user), orUnknown(a.Member))
	if priv {
		summary += ", privileged"
	}
	ev := a
	return &state.Alert{Time: a.Time, SandboxID: a.SandboxID, Kind: state.AlertExec, Severity: sev, Member: a.Member,
		Summary: summary, Event: &ev, Cause: a.Actor}
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// observe compares one sandbox's live posture with its baseline (recording one when it has
// none) and returns the alerts it raises. A sandbox whose posture is pending is skipped.
func (d *detector) observe(sb backends.Sandbox, now time.Time) []state.Alert {
	if sb.PosturePending != "" {
		// Incomplete findings make neither a baseline (a finding that arrives with the rest
		// would look like a weakening) nor an alert; the complete posture follows.
		return nil
	}
	prev, seenBefore := d.last[sb.ID]
	d.last[sb.ID] = sb.Findings
	b := d.base[sb.ID]
	if seenBefore && b != nil && sameSlice(prev, sb.Findings) {
		return nil // the supervisor hands the same findings back for a sandbox that did not change
	}
	if b == nil {
		d.base[sb.ID] = &state.Baseline{SandboxID: sb.ID, Recorded: now, Reason: ReasonFirstSeen, Findings: sb.Findings}
		d.dirty[sb.ID] = true
		return nil
	}
	was := make(map[string]sandbox.Finding, len(b.Findings))
	for _, f := range b.Findings {
		was[findingKey(f)] = f
	}
	var out []state.Alert
	seen := make(map[string]bool, len(sb.Findings))
	for _, f := range sb.Findings {
		k := findingKey(f)
		seen[k] = true
		before, had := was[k]
		switch {
		case had && f.Severity <= before.Severity:
			continue
		case !had && f.Severity < d.min:
			continue
		}
		if prev, ok := b.Alerted[k]; ok && prev >= f.Severity {
			continue // already alerted at this severity
		}
		if b.Alerted == nil {
			b.Alerted = map[string]sandbox.Severity{}
		}
		b.Alerted[k] = f.Severity
		d.dirty[sb.ID] = true
		a := state.Alert{Time: now, SandboxID: sb.ID, Kind: state.AlertDrift, Severity: f.Severity, Rule: f.RuleID,
			Member: f.Member, After: describe(f)}
		if had {
			a.Before = describe(before)
			a.Summary = fmt.Sprintf("%s rose from %s to %s", f.RuleID, strings.ToUpper(before.Severity.String()), strings.ToUpper(f.Severity.String()))
		} else {
			a.Before = "(not in baseline of " + b.Recorded.UTC().Format(time.RFC3339) + ", " + b.Reason + ")"
			a.Summary = "new " + strings.ToUpper(f.Severity.String()) + " " + f.RuleID + ": " + f.Message
		}
		ev := d.cause(sb.ID, f)
		if ev == nil && f.Network != "" {
			d.held = append(d.held, heldAlert{alert: a, finding: f, until: now.Add(causeWait)})
			continue
		}
		if ev != nil {
			a.Event, a.Cause = ev, ev.Actor
		}
		out = append(out, a)
	}
	// A weakening that went away may come back: forget it was alerted.
	for k := range b.Alerted {
		if !seen[k] {
			delete(b.Alerted, k)
			d.dirty[sb.ID] = true
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out
}

// postureKinds are the activities that can change posture: the evidence an alert names.
var postureKinds = map[sandbox.ActivityKind]bool{
	sandbox.ActNetConnect: true, sandbox.ActNetDisconnect: true, sandbox.ActUpdate: true, sandbox.ActCreate: true,
	sandbox.ActRestart: true, sandbox.ActStart: true, sandbox.ActPolicy: true, sandbox.ActTask: true, sandbox.ActEvent: true,
}

// cause is the activity that explains finding f of sandbox id. For a finding about one network
// it is the member's newest connect to that network, or nil; for any other finding it is the
// newest posture-changing activity of the sandbox, preferring the finding's member.
func (d *detector) cause(id string, f sandbox.Finding) *backends.Activity {
	var any *backends.Activity
	r := d.recent[id]
	for i := len(r) - 1; i >= 0; i-- {
		if !postureKinds[r[i].Kind] {
			continue
		}
		a := r[i]
		if f.Network != "" {
			if a.Kind == sandbox.ActNetConnect && a.Attrs["network"] == f.Network && (f.Member == "" || a.Member == f.Member) {
				return &a
			}
			continue
		}
		if f.Member != "" && a.Member == f.Member {
			return &a
		}
		if any == nil {
			any = &a
		}
	}
	return any
}

// release returns the held alerts whose cause has arrived, with it, and those whose wait is
// over, without one.
func (d *detector) release(now time.Time) []state.Alert {
	var out []state.Alert
	kept := d.held[:0]
	for _, h := range d.held {
		ev := d.cause(h.alert.SandboxID, h.finding)
		switch {
		case ev != nil:
			h.alert.Event, h.alert.Cause = ev, ev.Actor
		case now.Before(h.until):
			kept = append(kept, h)
			continue
		}
		out = append(out, h.alert)
	}
	clear(d.held[len(kept):])
	d.held = kept
	return out
}

// nextRelease is when the oldest held alert's wait ends (zero when none is held).
func (d *detector) nextRelease() time.Time {
	if len(d.held) == 0 {
		return time.Time{}
	}
	return d.held[0].until
}

// forgetGone drops the baselines of backend's sandboxes that are not in present (torn down):
// a later sandbox with the same name starts from its own first sight. It returns their IDs.
func (d *detector) forgetGone(backend string, present map[string]bool) []string {
	var gone []string
	for id := range d.base {
		if strings.HasPrefix(id, backend+"/") && !present[id] {
			gone = append(gone, id)
			delete(d.base, id)
			delete(d.last, id)
			delete(d.recent, id)
			delete(d.dirty, id)
		}
	}
	return gone
}

// rebaseline records the sandbox's last seen posture as its baseline.
func (d *detector) rebaseline(id, reason string, now time.Time) bool {
	f, ok := d.last[id]
	if !ok {
		return false
	}
	d.base[id] = &state.Baseline{SandboxID: id, Recorded: now, Reason: reason, Findings: f}
	d.dirty[id] = true
	return true
}

// flush returns the baselines changed since the last flush.
func (d *detector) flush() []state.Baseline {
	if len(d.dirty) == 0 {
		return nil
	}
	out := make([]state.Baseline, 0, len(d.dirty))
	for id := range d.dirty {
		b := *d.base[id]
		b.Alerted = make(map[string]sandbox.Severity, len(d.base[id].Alerted))
		for k, v := range d.base[id].Alerted {
			b.Alerted[k] = v
		}
		out = append(out, b)
	}
	clear(d.dirty)
	return out
}

// sameSlice reports whether a and b are the same slice (same backing array and length): a
// sandbox the backend did not re-assess keeps its findings slice, so most of a 1k fleet is
// skipped without comparing a single finding.
func sameSlice(a, b []sandbox.Finding) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

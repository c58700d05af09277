package journal

import "github.com/rangekeeper/rangekeeper/state"

// Interrupted is the outcome column of an intent whose outcome was never written: the process
// that ran it ended mid-action (a crash, a kill). Its write-ahead record, if the action kept
// one, is what `rangekeeper recover` finishes or rolls back.
const Interrupted = "interrupted"

// interrupted finds the intents among es with no outcome entry, leaving out the actions running
// now (running reports a sandbox with an action in flight; nil: none).
func interrupted(es []state.Entry, running func(sandboxID string) bool) map[uint64]bool {
	done := map[uint64]bool{}
	for _, e := range es {
		if e.Phase == state.PhaseOutcome && e.Intent != 0 {
			done[e.Intent] = true
		}
	}
	out := map[uint64]bool{}
	for _, e := range es {
		if e.Phase != state.PhaseIntent || done[e.Seq] {
			continue
		}
		if running != nil && running(e.Target) {
			continue
		}
		out[e.Seq] = true
	}
	return out
}

// IsInterrupted reports whether the loaded entry with seq is an interrupted intent.
func (m *Model) IsInterrupted(seq uint64) bool { return m.interrupted[seq] }

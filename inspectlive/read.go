package inspectlive

import (
	"context"
	"errors"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// Version counts published snapshots; it moves whenever anything a reader sees changed.
func (w *Watcher) Version() uint64 { return w.snap.Load().version }

// Changed returns a channel closed at the next published change; call it again after.
func (w *Watcher) Changed() <-chan struct{} {
	w.notifyMu.Lock()
	defer w.notifyMu.Unlock()
	return w.notify
}

// Evals is every running (or recently ended) eval with its samples. The slice is shared by every
// caller of this snapshot: read it, never modify it.
func (w *Watcher) Evals() []Eval { return w.snap.Load().evals }

// Problems are discovery problems not tied to one eval (unreadable control or trace files).
func (w *Watcher) Problems() []string { return w.snap.Load().problems }

// Link ties a sandbox to its eval and sample. execs are commands seen running in the sandbox
// (e.g. from docker exec events), used to confirm a trace or guessed link.
func (w *Watcher) Link(sb sandbox.Sandbox, execs ...string) Link {
	return w.snap.Load().link(sb, execs)
}

// Sample is one sample's state, a copy the caller may keep and change: the published snapshot's
// slices are shared by every reader.
func (w *Watcher) Sample(key EvalKey, id string, epoch int) (SampleState, bool) {
	sn := w.snap.Load()
	i, ok := sn.byKey[key]
	if !ok {
		return SampleState{}, false
	}
	for _, s := range sn.evals[i].Samples {
		if s.ID == id && s.Epoch == epoch {
			return s.Clone(), true
		}
	}
	return SampleState{}, false
}

// Commands is the agent's sandbox commands for the timeline, oldest first, the in-flight tool
// call (Pending) last.
func (w *Watcher) Commands(key EvalKey, id string, epoch int) []Command {
	s, ok := w.Sample(key, id, epoch)
	if !ok {
		return nil
	}
	out := append([]Command(nil), s.Commands...)
	if s.Pending != nil {
		out = append(out, *s.Pending)
	}
	return out
}

func (w *Watcher) reader(key EvalKey) (*buffer.Reader, bool) {
	w.srcMu.RLock()
	defer w.srcMu.RUnlock()
	s, ok := w.evals[key]
	if !ok {
		return nil, false
	}
	return s.rd, true
}

// Output is one command's output (by Command.Seq), returned only on demand.
func (w *Watcher) Output(key EvalKey, id string, epoch int, seq int64) (string, bool) {
	rd, ok := w.reader(key)
	if !ok {
		return "", false
	}
	return rd.Output(buffer.Key{ID: id, Epoch: epoch}, seq)
}

// Resolve expands an attachment://<hash> reference (a long pending tool call's cmd) from the
// sample's buffer, on demand; other strings come back unchanged.
func (w *Watcher) Resolve(ctx context.Context, key EvalKey, id string, epoch int, s string) (string, error) {
	rd, ok := w.reader(key)
	if !ok {
		return s, errors.New("eval " + string(key) + " is not watched")
	}
	return rd.Resolve(ctx, buffer.Key{ID: id, Epoch: epoch}, s)
}

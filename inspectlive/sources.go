package inspectlive

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
	"github.com/rangekeeper/rangekeeper/inspectlive/evallog"
)

// findLog locates the .eval the buffer belongs to and reads its start record.
func (w *Watcher) findLog(s *evalSource) {
	if s.logPath == "" {
		s.logPath = evallog.Find(w.cfg.LogDirs, s.file.LogBase)
	}
	if s.logPath == "" || s.startOK {
		return
	}
	st, err := os.Stat(s.logPath)
	if err != nil {
		s.logProbl = "eval log " + s.logPath + ": " + err.Error()
		return
	}
	if st.ModTime().Equal(s.logMod) {
		return
	}
	s.logMod = st.ModTime()
	start, err := evallog.ReadStart(s.logPath)
	if err != nil {
		s.logProbl = err.Error()
		return
	}
	s.start, s.startOK, s.logProbl = start, true, ""
	w.dirty = true
}

func (w *Watcher) pollEval(ctx context.Context, s *evalSource, now time.Time) {
	if s.rd.Ended() {
		return
	}
	changed, err := s.rd.Poll(ctx)
	stale := errors.Is(err, buffer.ErrStale)
	problem := ""
	if err != nil && !stale {
		problem = err.Error()
	}
	if stale != s.stale || problem != s.problem {
		s.stale, s.problem, w.dirty = stale, problem, true
	}
	if s.rd.Ended() && s.endedAt.IsZero() {
		s.endedAt = now
	}
	if !changed {
		return
	}
	w.dirty = true
	s.samples = s.rd.Samples()
	w.scoreFlushed(s)
}

// retryScores looks again for flushed samples' outcomes once the log has changed (a sample may
// leave the buffer a moment before its member lands, or the log may be found later).
func (w *Watcher) retryScores(s *evalSource) {
	n := len(s.flushed)
	w.scoreFlushed(s)
	if len(s.flushed) != n {
		w.dirty = true
	}
}

// scoreFlushed fetches the outcome of samples that left the buffer from the .eval log, with one
// open of the log, and only for samples not yet looked for in this version of it (the log can
// be large; a busy buffer changes every tick).
func (w *Watcher) scoreFlushed(s *evalSource) {
	if s.logPath == "" {
		return
	}
	st, err := os.Stat(s.logPath)
	if err != nil {
		return
	}
	mod := st.ModTime()
	var want []evallog.SampleKey
	for i := range s.samples {
		ss := &s.samples[i]
		k := buffer.Key{ID: ss.ID, Epoch: ss.Epoch}
		if ss.Status != buffer.StatusFlushed && ss.Status != buffer.StatusEnded {
			delete(s.flushed, k) // back in the buffer: a retry, whose outcome is yet to come
			continue
		}
		if _, ok := s.flushed[k]; ok || s.tried[k].Equal(mod) {
			continue
		}
		s.tried[k] = mod
		want = append(want, evallog.SampleKey{ID: k.ID, Epoch: k.Epoch})
	}
	if len(want) == 0 {
		return
	}
	got, err := evallog.ReadSamples(s.logPath, want)
	if err != nil {
		s.logProbl = err.Error()
	}
	for k, r := range got {
		s.flushed[buffer.Key{ID: k.ID, Epoch: k.Epoch}] = r
	}
}

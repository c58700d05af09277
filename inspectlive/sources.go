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
	if s.logPath == "" {
		return
	}
	st, err := os.Stat(s.logPath)
	if err != nil || st.ModTime().Equal(s.scoreMod) {
		return
	}
	n := len(s.flushed)
	w.scoreFlushed(s)
	if len(s.flushed) != n {
		w.dirty = true
	}
}

// scoreFlushed fetches the outcome of samples that left the buffer from the .eval log.
func (w *Watcher) scoreFlushed(s *evalSource) {
	if s.logPath != "" {
		if st, err := os.Stat(s.logPath); err == nil {
			s.scoreMod = st.ModTime()
		}
	}
	for i := range s.samples {
		st := &s.samples[i]
		if st.Status != buffer.StatusFlushed && st.Status != buffer.StatusEnded {
			continue
		}
		k := buffer.Key{ID: st.ID, Epoch: st.Epoch}
		if _, ok := s.flushed[k]; ok || s.logPath == "" {
			continue
		}
		r, err := evallog.ReadSample(s.logPath, st.ID, st.Epoch)
		if err != nil {
			if !errors.Is(err, evallog.ErrNoSample) {
				s.logProbl = err.Error()
			}
			continue
		}
		s.flushed[k] = r
	}
}

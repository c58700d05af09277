package inspectlive

import (
	"sort"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
)

// publish builds the next snapshot from the sources.
func (w *Watcher) publish(now time.Time) {
	w.srcMu.RLock()
	prev := w.snap.Load()
	sn := &snapshot{version: prev.version + 1, byKey: map[EvalKey]int{}, byUUID: map[string]sampleRef{},
		projects: map[string]tracedProject{}, alive: map[int]bool{}, problems: append([]string(nil), w.problems...)}
	for k, s := range w.evals {
		sn.evals = append(sn.evals, w.evalOf(k, s))
		sn.alive[s.file.PID] = s.alive
	}
	latest := map[string]tracedProject{} // pid/task/sample/epoch → newest project
	for _, t := range w.traces {
		sn.alive[t.file.PID] = t.alive
		for _, p := range t.rd.Projects() {
			tp := tracedProject{Project: p, PID: t.file.PID, TracePath: t.file.Path}
			sn.projects[p.Project] = tp
			id := sampleIdentity(tp)
			if old, ok := latest[id]; !ok || p.Time.After(old.Time) {
				latest[id] = tp
			}
		}
	}
	w.srcMu.RUnlock()
	sn.claimed = map[string]bool{}
	for name, tp := range sn.projects {
		if latest[sampleIdentity(tp)].Project.Project != name {
			tp.Superseded = true
			sn.projects[name] = tp
			continue
		}
		sn.claimed[claimKey(tp.PID, tp.SampleID, tp.Epoch)] = true
	}
	sort.Slice(sn.evals, func(i, j int) bool {
		if !sn.evals[i].Created.Equal(sn.evals[j].Created) {
			return sn.evals[i].Created.Before(sn.evals[j].Created)
		}
		return sn.evals[i].Key < sn.evals[j].Key
	})
	for i := range sn.evals {
		e := &sn.evals[i]
		sn.byKey[e.Key] = i
		for j := range e.Samples {
			if u := e.Samples[j].UUID; u != "" {
				sn.byUUID[u] = sampleRef{e, &e.Samples[j]}
			}
		}
	}
	sn.digest = sn.linkDigest()
	sn.linkVersion = prev.linkVersion
	if sn.digest != prev.digest {
		sn.linkVersion++
	}
	w.snap.Store(sn)
	w.notifyMu.Lock()
	close(w.notify)
	w.notify = make(chan struct{})
	w.notifyMu.Unlock()
}

// claimKey names a sample of a process that a current traced project holds.
func claimKey(pid int, id string, epoch int) string {
	return itoa(pid) + "\x00" + id + "\x00" + itoa(epoch)
}

func sampleIdentity(tp tracedProject) string {
	return itoa(tp.PID) + "\x00" + tp.Task + "\x00" + tp.SampleID + "\x00" + itoa(tp.Epoch)
}

// evalOf is the published view of one source.
func (w *Watcher) evalOf(k EvalKey, s *evalSource) Eval {
	e := Eval{Key: k, DataDir: s.file.DataDir, PID: s.file.PID, Alive: s.alive, Ended: s.rd.Ended(), EndedAt: s.endedAt,
		Stale: s.stale, BufferPath: s.file.Path, LogPath: s.logPath, Task: taskFromLogBase(s.file.LogBase)}
	if s.startOK {
		st := s.start
		e.Task, e.TaskID, e.Model, e.EvalID, e.RunID, e.Created = st.Task, st.TaskID, st.Model, st.EvalID, st.RunID, st.Created
	}
	if c, ok := w.controls[s.file.PID]; ok {
		e.Control = c.Path
		if e.RunID == "" {
			e.RunID = c.RunID
		}
	}
	for _, t := range w.traces {
		if t.file.PID == s.file.PID {
			e.TracePath = t.file.Path
		}
	}
	for _, p := range []string{s.problem, s.logProbl} {
		if p != "" {
			e.Problems = append(e.Problems, p)
		}
	}
	e.Samples = make([]SampleState, len(s.samples))
	copy(e.Samples, s.samples)
	for i := range e.Samples {
		st := &e.Samples[i]
		if st.Status != buffer.StatusFlushed && st.Status != buffer.StatusEnded {
			continue
		}
		if r, ok := s.flushed[buffer.Key{ID: st.ID, Epoch: st.Epoch}]; ok {
			if sc := r.Score(); sc != "" {
				st.Score = sc
			}
			if r.Error != "" {
				st.Error = r.Error
			}
			st.ScoreNote = "from " + s.logPath
		} else if st.Score == "" {
			st.ScoreNote = "score unknown: the sample is not in a .eval log found in the log dirs"
		}
	}
	return e
}

// snapshot is one immutable published view; the linker reads only this.
type snapshot struct {
	version uint64
	// linkVersion moves when digest, the hash of every link's inputs, does (LinkVersion).
	linkVersion uint64
	digest      uint64
	evals       []Eval
	byKey       map[EvalKey]int
	byUUID      map[string]sampleRef
	projects    map[string]tracedProject
	claimed     map[string]bool // claimKey of samples a current traced project holds
	alive       map[int]bool
	problems    []string
}

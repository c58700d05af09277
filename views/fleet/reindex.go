package fleet

import (
	"slices"

	"github.com/rangekeeper/rangekeeper/backends"
)

// incrementalResetLimit is the largest reset applied on the UI goroutine; a larger one is
// sorted by Compute, off it.
const incrementalResetLimit = 512

// mergeFrom is how many changed rows make reindex rebuild the index in one merge rather than
// insert row by row (each insert moves O(n) pointers).
const mergeFrom = 32

// reindex brings the index up to date for the rows of ids (changed, added or gone): O(n + k log k)
// for k ids, however many.
func (s *Store) reindex(ids []string) {
	if len(ids) < mergeFrom {
		for _, id := range ids {
			s.unindex(id)
			if r, ok := s.Get(id); ok {
				s.indexRow(r)
			}
		}
		return
	}
	drop := make(map[string]struct{}, len(ids))
	var add []*Row
	for _, id := range ids {
		if _, dup := drop[id]; dup {
			continue
		}
		drop[id] = struct{}{}
		delete(s.indexed, id)
		if r, ok := s.Get(id); ok && s.query.Match(r) {
			add = append(add, r)
		}
	}
	slices.SortFunc(add, s.order.Compare)
	merged := make([]*Row, 0, len(s.index)+len(add))
	for _, r := range s.index {
		if _, gone := drop[r.SB.ID]; gone {
			continue
		}
		for len(add) > 0 && s.order.Compare(add[0], r) < 0 {
			merged = append(merged, add[0])
			s.indexed[add[0].SB.ID] = add[0]
			add = add[1:]
		}
		merged = append(merged, r)
	}
	for _, r := range add {
		merged = append(merged, r)
		s.indexed[r.SB.ID] = r
	}
	s.index = merged
	s.gdirty = true
}

// ApplyEvent applies one backend event incrementally, except resets larger than
// incrementalResetLimit, which return true: the caller must schedule a Compute.
func (s *Store) ApplyEvent(backend string, ev backends.Event) (needCompute bool) {
	return s.apply(backend, ev, nil)
}

// apply is ApplyEvent with a reset's rows possibly built already (Prepare).
func (s *Store) apply(backend string, ev backends.Event, reset map[string]*Row) (needCompute bool) {
	switch ev.Type {
	case backends.EventReset:
		if reset == nil {
			reset = resetRows(backend, ev.Sandboxes)
		}
		return s.replaceBackend(backend, reset)
	case backends.EventUpsert:
		s.Put(NewRow(backend, ev.Sandbox, false))
	case backends.EventRemove:
		s.Remove(ev.ID)
	}
	return false
}

// resetRows builds a reset's rows by ID (the last of an ID reported twice wins).
func resetRows(backend string, sbs []backends.Sandbox) map[string]*Row {
	rows := make(map[string]*Row, len(sbs))
	for _, sb := range sbs {
		rows[sb.ID] = NewRow(backend, sb, false)
	}
	return rows
}

// replaceBackend makes fresh every row of backend (a reset). A small reset is merged into the
// index at once; a larger one only swaps the rows and returns true: the caller schedules a
// Compute, whose result supersedes any computation already pending, so its rows need no
// change marks (that loop alone was 10 ms at 25,000 rows).
func (s *Store) replaceBackend(backend string, fresh map[string]*Row) (needCompute bool) {
	old := s.rows[backend]
	if s.anyLinks { // the reset's rows are not shared yet: they take their links in place
		for _, r := range fresh {
			s.linkFresh(r)
		}
	}
	s.rows[backend] = fresh
	var moved []string // IDs another backend held
	for b, rows := range s.rows {
		if b == backend {
			continue
		}
		small, big := rows, fresh
		if len(small) > len(big) {
			small, big = big, small
		}
		for id := range small {
			if _, both := big[id]; both {
				moved = append(moved, id)
				delete(rows, id) // allowed while ranging, even over rows itself
			}
		}
	}
	if len(fresh) > incrementalResetLimit {
		s.version++
		s.gdirty = true
		return true
	}
	ids := moved
	for id := range old {
		if _, kept := fresh[id]; !kept {
			ids = append(ids, id)
		}
	}
	for id := range fresh {
		ids = append(ids, id)
	}
	for _, id := range ids {
		s.touch(id)
	}
	s.reindex(ids)
	return false
}

// MarkBackend sets the stale flag on every row of backend (a backend went away or came back).
// Staleness neither orders nor filters a row, so each changed row takes its old one's place in
// the index: O(n), where a sorted re-insert per row froze the UI for 0.3 s at 25,000 rows.
func (s *Store) MarkBackend(backend string, stale bool) {
	rows := s.rows[backend]
	n := 0
	for _, r := range rows {
		if r.Stale != stale {
			n++
		}
	}
	if n == 0 {
		return
	}
	slab := make([]Row, 0, n) // one allocation, not one per row
	for id, r := range rows {
		if r.Stale != stale {
			slab = append(slab, *r)
			nr := &slab[len(slab)-1]
			nr.Stale = stale
			rows[id] = nr
			s.touch(id)
		}
	}
	for i, r := range s.index {
		if r.Backend != backend || r.Stale == stale {
			continue
		}
		// After a large reset, until its Compute is installed, the index still holds the rows
		// it replaced: a row whose place differs waits for that Compute.
		if nr := rows[r.SB.ID]; nr != nil && s.order.Compare(nr, r) == 0 {
			s.index[i] = nr
			s.indexed[r.SB.ID] = nr
		}
	}
}

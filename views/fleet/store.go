package fleet

import (
	"slices"
)

// Store holds the fleet as rows keyed by backend and sandbox ID plus the filtered, sorted index
// the table shows. Single backend events update the index incrementally (binary search, no
// rebuild); whole-fleet work (a new filter, a new order, a large backend reset) is computed off
// the UI goroutine by Compute and installed with Install. Work that touches many rows at once
// (a backend going stale, a computed index installed after many changes) merges them into the
// index in one pass (reindex.go), never one sorted insert per row.
//
// A sandbox ID names its backend (backends.ID), so one ID lives under one backend; should a
// backend report another's ID, the newer row wins, as with one map.
type Store struct {
	rows    map[string]map[string]*Row // backend → sandbox ID → row
	index   []*Row                     // rows matching query, in order
	indexed map[string]*Row            // the pointer of each row currently in index
	query   Query
	order   Order

	version uint64            // bumped on every change to rows
	install uint64            // bumped when a computed index is installed
	changed map[string]uint64 // id → version of its last change (for reconciling async results)
	groups  []groupStart      // computed lazily when grouping
	gdirty  bool

	links    map[string]*EvalLink // sandbox ID → its Inspect sample (evals.go); replaced whole
	anyLinks bool
}

type groupStart struct {
	at    int
	key   string
	count int
}

// NewStore returns an empty store ordered by backend then name.
func NewStore() *Store {
	return &Store{rows: map[string]map[string]*Row{}, indexed: map[string]*Row{}, changed: map[string]uint64{}, gdirty: true}
}

// Len is the number of rows shown; Total the number known.
func (s *Store) Len() int { return len(s.index) }
func (s *Store) Total() int {
	n := 0
	for _, rows := range s.rows {
		n += len(rows)
	}
	return n
}

// At returns the i-th shown row.
func (s *Store) At(i int) *Row { return s.index[i] }

// Get returns a row by sandbox ID.
func (s *Store) Get(id string) (*Row, bool) {
	for _, rows := range s.rows {
		if r, ok := rows[id]; ok {
			return r, true
		}
	}
	return nil, false
}

// Gen changes whenever the shown index may have: a row changed or a computed index was installed.
func (s *Store) Gen() uint64 { return s.version + s.install }

// Query and Order in force.
func (s *Store) Query() Query { return s.query }
func (s *Store) Order() Order { return s.order }

// IndexOf returns the position of a sandbox in the shown index, or -1.
func (s *Store) IndexOf(id string) int {
	r, ok := s.indexed[id]
	if !ok {
		return -1
	}
	i, found := s.search(r)
	if !found {
		return -1
	}
	return i
}

func (s *Store) search(r *Row) (int, bool) {
	return slices.BinarySearchFunc(s.index, r, s.order.Compare)
}

func (s *Store) touch(id string) {
	s.version++
	s.changed[id] = s.version
	s.gdirty = true
}

// backendRows is backend's row map, made on first use.
func (s *Store) backendRows(backend string) map[string]*Row {
	rows := s.rows[backend]
	if rows == nil {
		rows = map[string]*Row{}
		s.rows[backend] = rows
	}
	return rows
}

// set stores r as its ID's row, under r's backend only.
func (s *Store) set(r *Row) {
	if s.anyLinks {
		s.linkFresh(r)
	}
	for b, rows := range s.rows {
		if b != r.Backend {
			delete(rows, r.SB.ID)
		}
	}
	s.backendRows(r.Backend)[r.SB.ID] = r
}

// Put inserts or replaces one row incrementally.
func (s *Store) Put(r *Row) {
	id := r.SB.ID
	s.unindex(id)
	s.set(r)
	s.touch(id)
	s.indexRow(r)
}

// PutAll inserts or replaces many rows with one filter and sort of the store instead of a sorted
// insert each (Put is O(n) per row: loading a 10,000-row cache that way is O(n²)).
func (s *Store) PutAll(rows []*Row) {
	for _, r := range rows {
		s.set(r)
		s.touch(r.SB.ID)
	}
	s.Install(Compute(s.Snapshot(s.query, s.order)))
}

// Remove deletes one row incrementally.
func (s *Store) Remove(id string) {
	for _, rows := range s.rows {
		if _, ok := rows[id]; ok {
			s.unindex(id)
			delete(rows, id)
			s.touch(id)
			return
		}
	}
}

func (s *Store) unindex(id string) {
	old, ok := s.indexed[id]
	if !ok {
		return
	}
	if i, found := s.search(old); found {
		s.index = slices.Delete(s.index, i, i+1)
	}
	delete(s.indexed, id)
}

func (s *Store) indexRow(r *Row) {
	if !s.query.Match(r) {
		return
	}
	i, _ := s.search(r)
	s.index = slices.Insert(s.index, i, r)
	s.indexed[r.SB.ID] = r
}

// Snapshot is an immutable copy of everything Compute needs.
type Snapshot struct {
	Rows    []*Row
	Query   Query
	Order   Order
	Version uint64
}

// Snapshot captures the rows for an off-goroutine Compute with a new query or order.
func (s *Store) Snapshot(q Query, o Order) Snapshot {
	rows := make([]*Row, 0, s.Total())
	for _, byID := range s.rows {
		for _, r := range byID {
			rows = append(rows, r)
		}
	}
	return Snapshot{Rows: rows, Query: q, Order: o, Version: s.version}
}

// Result is a computed index ready to install, made by Compute.
type Result struct {
	Index   []*Row
	indexed map[string]*Row // Index by ID, built beside it so Install need not
	Query   Query
	Order   Order
	Version uint64
}

// Compute filters and sorts a snapshot. It is pure and safe to run on any goroutine.
func Compute(snap Snapshot) Result {
	idx := make([]*Row, 0, len(snap.Rows))
	for _, r := range snap.Rows {
		if snap.Query.Match(r) {
			idx = append(idx, r)
		}
	}
	slices.SortFunc(idx, snap.Order.Compare)
	byID := make(map[string]*Row, len(idx))
	for _, r := range idx {
		byID[r.SB.ID] = r
	}
	return Result{Index: idx, indexed: byID, Query: snap.Query, Order: snap.Order, Version: snap.Version}
}

// Install adopts a computed result, then re-applies every row that changed after its snapshot
// so no event that arrived during the computation is lost. Its cost on the UI goroutine is the
// changes', not the fleet's: the result arrives indexed.
func (s *Store) Install(res Result) {
	s.install++
	s.index = res.Index
	s.query = res.Query
	s.order = res.Order
	s.indexed = res.indexed
	var later []string
	for id, v := range s.changed {
		if v > res.Version {
			later = append(later, id)
		}
	}
	s.reindex(later)
	s.gdirty = true
	s.compactChanges(res.Version)
}

// compactChanges drops change marks no pending computation can need.
func (s *Store) compactChanges(upTo uint64) {
	if len(s.changed) < 4096 {
		return
	}
	for id, v := range s.changed {
		if v <= upTo {
			delete(s.changed, id)
		}
	}
}

// Groups returns the group headers over the current index (recomputed only after a change).
func (s *Store) Groups() []groupStart {
	if s.order.Group == GroupNone {
		return nil
	}
	if !s.gdirty {
		return s.groups
	}
	s.groups = s.groups[:0]
	for i, r := range s.index {
		k := s.order.GroupKey(r)
		if n := len(s.groups); n == 0 || s.groups[n-1].key != k {
			s.groups = append(s.groups, groupStart{at: i, key: k})
		}
		s.groups[len(s.groups)-1].count++
	}
	s.gdirty = false
	return s.groups
}

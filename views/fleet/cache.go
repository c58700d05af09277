package fleet

import (
	"slices"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// CachedFleet is one backend's last known fleet, as the inventory cache holds it. When the
// cache left the findings encoded (the Sandboxes have none), Worst and Findings read them: the
// rows show the worst severity and the detail reads the findings when opened.
type CachedFleet struct {
	Backend   string
	Sandboxes []backends.Sandbox
	Worst     func(i int) catalog.Severity
	Findings  func(i int) []backends.Finding
}

// row makes the i-th sandbox's row (stale).
func (f CachedFleet) row(i int) *Row {
	r := NewRow(f.Backend, f.Sandboxes[i], true)
	if f.Findings != nil {
		r.Sev = f.Worst(i)
		r.findings = func() []backends.Finding { return f.Findings(i) }
	}
	return r
}

// PreparedCache is an inventory cache made into rows and sorted by one order, off the UI
// goroutine: at 10,000 cached sandboxes building and sorting the rows took 25 ms of the UI
// goroutine in a just-started process (first frame from the cache).
type PreparedCache struct {
	perBackend map[string][]*Row
	backends   []string // in the cache's order
	sorted     []*Row   // every row, sorted by order
	order      Order
	// The store's maps for sorted, built here too; nil when the cache holds one ID twice.
	byBackend map[string]map[string]*Row
	byID      map[string]*Row
}

// PrepareCache builds the rows of a cache (stale) and sorts them by o. It is pure and safe to run
// on any goroutine.
func PrepareCache(fleets []CachedFleet, o Order) PreparedCache {
	n := 0
	for _, f := range fleets {
		n += len(f.Sandboxes)
	}
	c := PreparedCache{perBackend: make(map[string][]*Row, len(fleets)), sorted: make([]*Row, 0, n), order: o}
	for _, f := range fleets {
		rows := make([]*Row, len(f.Sandboxes))
		for i := range f.Sandboxes {
			rows[i] = f.row(i)
		}
		if _, dup := c.perBackend[f.Backend]; !dup {
			c.backends = append(c.backends, f.Backend)
		}
		c.perBackend[f.Backend] = append(c.perBackend[f.Backend], rows...)
		c.sorted = append(c.sorted, rows...)
	}
	slices.SortStableFunc(c.sorted, o.Compare)
	c.byID = make(map[string]*Row, n)
	c.byBackend = make(map[string]map[string]*Row, len(c.perBackend))
	for b, rows := range c.perBackend {
		c.byBackend[b] = make(map[string]*Row, len(rows))
		for _, r := range rows {
			if _, dup := c.byID[r.SB.ID]; dup {
				c.byID, c.byBackend = nil, nil
				return c
			}
			c.byID[r.SB.ID] = r
			c.byBackend[b][r.SB.ID] = r
		}
	}
	return c
}

// Len is the number of cached rows.
func (c PreparedCache) Len() int { return len(c.sorted) }

// LoadPrepared paints a prepared cache as LoadCached paints each of its backends. When nothing
// is shown yet, no filter or computation is pending and the order is the one the cache was
// sorted by (a start, as it always is), its sorted rows become the index as they are.
func (m *Model) LoadPrepared(c PreparedCache) {
	if c.Len() == 0 {
		return
	}
	fast := m.store.Total() == 0 && !m.computing && m.store.query.Empty() && m.store.order == c.order
	for _, h := range m.health {
		if _, cached := c.perBackend[h.Backend]; cached && h.State == supervisor.StateConnected {
			fast = false
		}
	}
	if !fast || !m.store.loadSorted(c) {
		for _, b := range c.backends {
			m.LoadCached(b, c.perBackend[b])
		}
		return
	}
	for _, b := range c.backends {
		if _, ok := m.stale[b]; !ok {
			m.stale[b] = "cached: waiting for the backend"
		}
	}
	m.followCursor()
}

// loadSorted makes a prepared cache, already in the store's order and all matching its query,
// the contents of an empty store: no sort, no map built and one version for the lot. It refuses
// (false, store unchanged) a cache that holds one ID twice, which only the general path
// reconciles.
func (s *Store) loadSorted(c PreparedCache) bool {
	if c.byID == nil || s.anyLinks { // links arrived first: the general path attaches them
		return false
	}
	s.rows = c.byBackend
	s.indexed = c.byID
	s.index = c.sorted
	s.version++
	s.install++
	s.gdirty = true
	return true
}

package cli

import (
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
)

// inventorySaver writes the inventory cache of every connected backend whose fleet changed
// since its last save. The TUI runs it every 30 s and at exit: an idle fleet costs one version
// read per backend (no copy, no encode, no transaction), which is what keeps idle CPU and the
// GC's pace flat at tens of thousands of sandboxes (hack/benchfleet/FINDINGS.md, item 1).
type inventorySaver struct {
	db  *state.DB
	sup *supervisor.Supervisor
	now func() time.Time

	mu    sync.Mutex        // a periodic save and the exit save may overlap
	saved map[string]uint64 // backend → supervisor version last written
}

func newInventorySaver(db *state.DB, s *supervisor.Supervisor) *inventorySaver {
	return &inventorySaver{db: db, sup: s, now: time.Now, saved: map[string]uint64{}}
}

// Save caches the changed fleets. A backend that is not connected keeps its last good cache.
func (v *inventorySaver) Save() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, h := range v.sup.Health() {
		if h.State != supervisor.StateConnected {
			continue
		}
		if last, ok := v.saved[h.Backend]; ok && last == v.sup.Version(h.Backend) {
			continue
		}
		sbs, ver := v.sup.FleetOf(h.Backend)
		if err := v.db.SaveInventory(state.InventoryRecord{Backend: h.Backend, Saved: v.now().UTC(), Sandboxes: sbs}); err != nil {
			return err
		}
		v.saved[h.Backend] = ver
	}
	return nil
}

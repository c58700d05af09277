package state

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// InventoryRecord is the last known fleet of one backend, so the UI paints instantly at start.
type InventoryRecord struct {
	Backend string `json:"backend"`
	// Saved is when this fleet was saved; a save of an unchanged fleet keeps the earlier time.
	Saved     time.Time         `json:"saved"`
	Sandboxes []sandbox.Sandbox `json:"sandboxes"`

	// outline, set by InventoryOutlines, keeps the sandboxes' findings encoded: Sandboxes[i]
	// has none, and FindingsOf and WorstOf read them.
	outline *findingsOutline
}

// SaveInventory replaces the cached fleet of one backend (in the compact layout of
// invcodec.go). Saving a fleet identical to the cached one writes nothing: the periodic save of
// an idle fleet costs one encode and one comparison, no write transaction and no fsync.
func (db *DB) SaveInventory(rec InventoryRecord) error {
	raw := encodeInventory(rec)
	body := inventoryBody(raw)
	same := false
	if err := db.view(func(tx *bolt.Tx) error {
		old := inventoryBody(tx.Bucket(bucketInventory).Get([]byte(rec.Backend)))
		same = old != nil && string(old) == string(body)
		return nil
	}); err != nil || same {
		return err
	}
	return db.updateSized(len(raw), func(tx *bolt.Tx) error { return tx.Bucket(bucketInventory).Put([]byte(rec.Backend), raw) })
}

// Inventory returns every cached backend fleet.
func (db *DB) Inventory() ([]InventoryRecord, error) { return db.inventory(false) }

// InventoryOutlines is Inventory with each sandbox's findings left encoded, to be read with
// FindingsOf when wanted: at a start they are a third of a cache's memory (34 findings a
// sandbox of a two-service release, 30 MB at 10,000), which a just-started process must fault
// in page by page, and the backend's first answer replaces them a moment later anyway.
func (db *DB) InventoryOutlines() ([]InventoryRecord, error) { return db.inventory(true) }

func (db *DB) inventory(outline bool) ([]InventoryRecord, error) {
	var out []InventoryRecord
	err := db.each(bucketInventory, "", func(raw []byte) error {
		var r InventoryRecord
		var err error
		if len(raw) > 0 && raw[0] == '{' { // written as JSON by an earlier version
			err = json.Unmarshal(raw, &r)
		} else if outline {
			r, err = decodeInventoryOutline(raw)
		} else {
			r, err = decodeInventory(raw)
		}
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// SnapshotRecord is a stored snapshot: the backend-neutral info plus the backend's own recipe
// (Data) for recreating the sandbox exactly. *DB is the backends' snapshot store
// (backends.SnapshotStore), given to them at construction.
type SnapshotRecord = sandbox.SnapshotRecord

// ArchiveDir is where a snapshot's volume archives live: "snapshots/<snapshot ID>/" beside the
// state file, because their size is unbounded and bbolt keeps every page it ever grew to.
func (db *DB) ArchiveDir(snapshotID string) string {
	return filepath.Join(filepath.Dir(db.path), "snapshots", snapshotID)
}

// PutSnapshot stores rec under sandbox/snapshot ID.
func (db *DB) PutSnapshot(rec SnapshotRecord) error {
	return db.put(bucketSnapshots, rec.Info.SandboxID+"\x00"+rec.Info.ID, rec)
}

// Snapshot fetches one record; ok is false when absent.
func (db *DB) Snapshot(sandboxID, snapshotID string) (SnapshotRecord, bool, error) {
	var rec SnapshotRecord
	ok, err := db.get(bucketSnapshots, sandboxID+"\x00"+snapshotID, &rec)
	return rec, ok, err
}

// Snapshots lists a sandbox's snapshots oldest first; an empty sandboxID lists all.
func (db *DB) Snapshots(sandboxID string) ([]SnapshotRecord, error) {
	prefix := ""
	if sandboxID != "" {
		prefix = sandboxID + "\x00"
	}
	var out []SnapshotRecord
	err := db.each(bucketSnapshots, prefix, func(raw []byte) error {
		var r SnapshotRecord
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Info.Created.Before(out[j].Info.Created) })
	return out, err
}

// DeleteSnapshot removes one record.
func (db *DB) DeleteSnapshot(sandboxID, snapshotID string) error {
	return db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSnapshots).Delete([]byte(sandboxID + "\x00" + snapshotID))
	})
}

// ProbeRecord is one probe run's result. Report holds the merged, secret-free verdict document.
type ProbeRecord struct {
	SandboxID string          `json:"sandbox"`
	Time      time.Time       `json:"time"`
	Summary   string          `json:"summary"`
	Worst     string          `json:"worst,omitempty"`
	Report    json.RawMessage `json:"report"`
}

// PutProbe appends a probe result to the sandbox's history.
func (db *DB) PutProbe(rec ProbeRecord) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	return db.put(bucketProbes, rec.SandboxID+"\x00"+rec.Time.UTC().Format(time.RFC3339Nano), rec)
}

// Probes returns a sandbox's probe history oldest first, at most limit newest (0: all).
func (db *DB) Probes(sandboxID string, limit int) ([]ProbeRecord, error) {
	var out []ProbeRecord
	err := db.each(bucketProbes, sandboxID+"\x00", func(raw []byte) error {
		var r ProbeRecord
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, err
}

// Draft is a spec being authored; it lives here until the operator saves it to a file.
type Draft struct {
	Name    string    `json:"name"`
	Format  string    `json:"format"`
	Content string    `json:"content"`
	Target  string    `json:"target,omitempty"` // file it will be saved to
	Updated time.Time `json:"updated"`
}

// PutDraft stores or replaces a draft by name.
func (db *DB) PutDraft(d Draft) error {
	if d.Updated.IsZero() {
		d.Updated = time.Now().UTC()
	}
	return db.put(bucketDrafts, d.Name, d)
}

// Draft fetches one draft.
func (db *DB) Draft(name string) (Draft, bool, error) {
	var d Draft
	ok, err := db.get(bucketDrafts, name, &d)
	return d, ok, err
}

// Drafts lists every draft by name.
func (db *DB) Drafts() ([]Draft, error) {
	var out []Draft
	err := db.each(bucketDrafts, "", func(raw []byte) error {
		var d Draft
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// DeleteDraft removes a draft.
func (db *DB) DeleteDraft(name string) error {
	return db.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketDrafts).Delete([]byte(name)) })
}

func (db *DB) put(bucket []byte, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state %s: encode %q: %w", bucket, key, err)
	}
	raw = seal(raw)
	return db.update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key), raw) })
}

func (db *DB) get(bucket []byte, key string, v any) (bool, error) {
	var found bool
	err := db.view(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucket).Get([]byte(key))
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, v)
	})
	return found, err
}

func (db *DB) each(bucket []byte, prefix string, fn func(raw []byte) error) error {
	return db.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		p := []byte(prefix)
		for k, v := c.Seek(p); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
			if err := fn(v); err != nil {
				return fmt.Errorf("state %s %q: %w", bucket, k, err)
			}
		}
		return nil
	})
}

package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the schema this build writes. Each migration moves the file up one version.
const SchemaVersion = 1

// migrations[i] upgrades a file at version i to version i+1.
var migrations = []func(tx *bolt.Tx) error{
	// 0 → 1: the initial layout, every bucket declared.
	func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketInventory, bucketJournal, bucketSnapshots, bucketProbes, bucketDrafts} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	},
}

func (db *DB) migrate() error {
	// A file already at this schema is only read: a write transaction commits twice with an
	// fdatasync each (6 ms here, tens on a busy disk), and every workbench start paid that on
	// its way to the first frame. Any other file, or a read that fails, takes the
	// write path, which creates, upgrades or reports as before.
	if _, err := os.Stat(db.path); err == nil {
		var v int
		err := db.view(func(tx *bolt.Tx) error { v = schemaOf(tx); return nil })
		if errors.Is(err, ErrLocked) {
			return err // the write would wait out the same lock again
		}
		if err == nil && v == SchemaVersion {
			return nil
		}
	}
	return db.update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		v := schemaOf(tx)
		if v > SchemaVersion {
			return fmt.Errorf("schema version %d is newer than this rangekeeper understands (%d); upgrade rangekeeper", v, SchemaVersion)
		}
		for ; v < SchemaVersion; v++ {
			if err := migrations[v](tx); err != nil {
				return fmt.Errorf("migrate schema %d→%d: %w", v, v+1, err)
			}
		}
		return meta.Put(keySchema, binary.BigEndian.AppendUint64(nil, uint64(SchemaVersion)))
	})
}

// schemaOf is the schema version a file records (0 when it records none).
func schemaOf(tx *bolt.Tx) int {
	if meta := tx.Bucket(bucketMeta); meta != nil {
		if raw := meta.Get(keySchema); len(raw) == 8 {
			return int(binary.BigEndian.Uint64(raw))
		}
	}
	return 0
}

// Version reports the file's schema version.
func (db *DB) Version() (int, error) {
	var v int
	err := db.view(func(tx *bolt.Tx) error {
		v = schemaOf(tx)
		return nil
	})
	return v, err
}

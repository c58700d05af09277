package state

import (
	"encoding/binary"
	"fmt"

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
	return db.update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		v := 0
		if raw := meta.Get(keySchema); len(raw) == 8 {
			v = int(binary.BigEndian.Uint64(raw))
		}
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

// Version reports the file's schema version.
func (db *DB) Version() (int, error) {
	var v int
	err := db.view(func(tx *bolt.Tx) error {
		if raw := tx.Bucket(bucketMeta).Get(keySchema); len(raw) == 8 {
			v = int(binary.BigEndian.Uint64(raw))
		}
		return nil
	})
	return v, err
}

package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// Pending is a write-ahead record of a multi-step action (sandbox.PendingAction).
type Pending = sandbox.PendingAction

// bucketPending holds the write-ahead records, keyed by their journal intent's Seq. It is
// created on first use (no schema change: files without it simply have nothing pending).
var bucketPending = []byte("pending")

// maxPendingSteps bounds a record's step log.
const maxPendingSteps = 64

// PutPending writes or replaces a record durably (bbolt fsyncs on commit): once it returns nil,
// a crash leaves the record for the next start.
func (db *DB) PutPending(p Pending) error {
	p.Updated = time.Now().UTC()
	if len(p.Steps) > maxPendingSteps {
		p.Steps = append([]string{p.Steps[0], "…"}, p.Steps[len(p.Steps)-maxPendingSteps+2:]...)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("state pending %d: encode: %w", p.ID, err)
	}
	raw = seal(raw)
	return db.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketPending)
		if err != nil {
			return err
		}
		return b.Put(seqKey(p.ID), raw)
	})
}

// PendingAction fetches one record; ok is false when absent.
func (db *DB) PendingAction(id uint64) (Pending, bool, error) {
	var p Pending
	var ok bool
	err := db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b == nil {
			return nil
		}
		raw := b.Get(seqKey(id))
		if raw == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(raw, &p)
	})
	return p, ok, err
}

// PendingActions lists the records, oldest first; a non-empty sandboxID keeps that sandbox's.
func (db *DB) PendingActions(sandboxID string) ([]Pending, error) {
	var out []Pending
	err := db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var p Pending
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("state pending %d: %w", binary.BigEndian.Uint64(k), err)
			}
			if sandboxID == "" || p.SandboxID == sandboxID {
				out = append(out, p)
			}
			return nil
		})
	})
	return out, err
}

// DeletePending removes a record (the action ended, or was recovered).
func (db *DB) DeletePending(id uint64) error {
	return db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b == nil {
			return nil
		}
		return b.Delete(seqKey(id))
	})
}

// StoreID names this state file to the engine (on the snapshot images its records own), so a
// process with another state file leaves them alone: its absolute path.
func (db *DB) StoreID() string {
	if abs, err := filepath.Abs(db.path); err == nil {
		return abs
	}
	return db.path
}

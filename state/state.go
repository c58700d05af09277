// Package state keeps rangekeeper's local state in one bbolt file: the inventory cache, the
// append-only action journal, snapshot records, probe history and spec drafts.
package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Bucket names. Declared together so every later feature finds its bucket already migrated.
var (
	bucketMeta      = []byte("meta")
	bucketInventory = []byte("inventory")
	bucketJournal   = []byte("journal")
	bucketSnapshots = []byte("snapshots")
	bucketProbes    = []byte("probes")
	bucketDrafts    = []byte("drafts")
)

var keySchema = []byte("schema_version")

// LockTimeout is how long Open waits for a file another process holds.
const LockTimeout = 2 * time.Second

// DB is an open state file.
type DB struct {
	bolt *bolt.DB
	path string
}

// ErrLocked is returned (wrapped) when another process holds the state file.
var ErrLocked = errors.New("state file is locked by another process")

// DefaultPath is $XDG_STATE_HOME/rangekeeper/state.db, falling back to ~/.local/state.
func DefaultPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "rangekeeper", "state.db")
}

// Open opens or creates the state file at path and migrates it to the current schema.
func Open(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state %s: create directory: %w", path, err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: LockTimeout})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s is in use by another rangekeeper (waited %s); close the other instance or pass --state with a different file", ErrLocked, path, LockTimeout)
		}
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	db := &DB{bolt: b, path: path}
	if err := db.migrate(); err != nil {
		b.Close()
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	return db, nil
}

// Path returns the file path.
func (db *DB) Path() string { return db.path }

// Close releases the file.
func (db *DB) Close() error { return db.bolt.Close() }

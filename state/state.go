// Package state keeps rangekeeper's local state in one bbolt file: the inventory cache, the
// append-only action journal, snapshot records, probe history and spec drafts.
package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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

// LockTimeout is how long a transaction waits for the file while another process is inside one
// of its own transactions.
const LockTimeout = 2 * time.Second

// DB is a state file. It holds the file only for the length of a transaction: every read opens
// it shared (read-only), every write opens it exclusively, and both close it when done, so any
// number of rangekeeper processes (an open workbench, `rangekeeper journal`, a snapshot from
// another terminal) work on one file side by side. Within a process, transactions take turns.
type DB struct {
	path string

	mu     sync.Mutex // one transaction at a time in this process (flock is per open file)
	closed bool

	written writeNotifier // Written's notifications, started at its first call
}

// ErrLocked is returned (wrapped) when another process holds the state file past LockTimeout.
var ErrLocked = errors.New("state file is locked by another process")

// ErrClosed is returned by a DB after Close.
var ErrClosed = errors.New("state file closed")

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

// Open creates the state file at path if needed and migrates it to the current schema. It does
// not keep the file open: see DB.
func Open(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state %s: create directory: %w", path, err)
	}
	db := &DB{path: path}
	if err := db.migrate(); err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	return db, nil
}

// Path returns the file path.
func (db *DB) Path() string { return db.path }

// Close ends the use of the file; later calls fail with ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	db.closed = true
	db.mu.Unlock()
	db.written.close()
	return nil
}

// update runs fn in a write transaction, holding the file exclusively for its length.
func (db *DB) update(fn func(*bolt.Tx) error) error { return db.tx(true, 0, fn) }

// updateSized is update for a transaction that writes about n bytes of values: the mapping is
// opened with room for them too. A large write into a fresh file otherwise remaps mid-commit,
// and bbolt copies every dirty node out of the old mapping first (a 25,000-sandbox inventory
// record: garbage the size of the record).
func (db *DB) updateSized(n int, fn func(*bolt.Tx) error) error { return db.tx(true, n, fn) }

// view runs fn in a read transaction, holding the file shared for its length.
func (db *DB) view(fn func(*bolt.Tx) error) error { return db.tx(false, 0, fn) }

func (db *DB) tx(write bool, writes int, fn func(*bolt.Tx) error) error {
	return db.open(write, writes, func(b *bolt.DB) error {
		if write {
			return b.Update(fn)
		}
		return b.View(fn)
	})
}

// updateChunks runs fn(tx, i) for each i in [0, n), each in a write transaction of its own,
// committed before the next begins, all under one open of the file. A transaction keeps every
// value it puts in memory until it commits: 25,000 first baselines written at once held 46 MB
// of encodings, the top of a 50,000-pod load's heap. For records that stand alone
// (a baseline not written is recorded again at the next start). A remap in a chunk copies only
// that chunk's nodes, so no room is reserved for the whole write.
func (db *DB) updateChunks(n int, fn func(tx *bolt.Tx, i int) error) error {
	return db.open(true, 0, func(b *bolt.DB) error {
		for i := range n {
			if err := b.Update(func(tx *bolt.Tx) error { return fn(tx, i) }); err != nil {
				return err
			}
		}
		return nil
	})
}

// open opens the file for the length of use (shared for reading, exclusive for writing).
func (db *DB) open(write bool, writes int, use func(*bolt.DB) error) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return fmt.Errorf("%s: %w", db.path, ErrClosed)
	}
	opts := &bolt.Options{Timeout: LockTimeout, ReadOnly: !write}
	if fi, err := os.Stat(db.path); write && err == nil {
		// Room for the file to double without a remap: a remap in a write transaction copies
		// every loaded node out of the old mapping first (garbage the size of what it rewrites).
		// Address space only; nothing is read or resident until used.
		// A write's new pages come before the old ones are freed: twice what it writes.
		opts.InitialMmapSize = int(2*fi.Size()) + 2*writes + 1<<20
	}
	b, err := bolt.Open(db.path, 0o600, opts)
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return fmt.Errorf("%w: %s stayed in use by another process for %s (a stuck transaction?); end it or pass --state with a different file", ErrLocked, db.path, LockTimeout)
		}
		return fmt.Errorf("state %s: %w", db.path, err)
	}
	err = use(b)
	if cerr := b.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("state %s: close: %w", db.path, cerr)
	}
	return err
}

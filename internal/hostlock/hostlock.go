// Package hostlock serialises rangekeeper processes acting on one sandbox on one host, whatever
// state file each uses: one lock file per sandbox in a directory every process shares, held with
// flock(2) so a killed holder releases it at once. The file says who holds it, and keeps naming
// an action that was cut short (with its state file and write-ahead record) until that action is
// recovered, so a process with another state file does not act on a half-done sandbox.
package hostlock

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// EnvDir overrides the lock directory (every process that must see each other needs the same).
const EnvDir = "RANGEKEEPER_LOCK_DIR"

// Dir is the lock directory: $RANGEKEEPER_LOCK_DIR, else <tmp>/rangekeeper-locks.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "rangekeeper-locks")
}

// Holder says who holds (or held) a sandbox's lock.
type Holder struct {
	Sandbox  string    `json:"sandbox"`
	Action   string    `json:"action"`
	Operator string    `json:"operator,omitempty"`
	PID      int       `json:"pid"`
	Host     string    `json:"host,omitempty"`
	Since    time.Time `json:"since"`
	State    string    `json:"state,omitempty"`  // the holder's state file
	Record   uint64    `json:"record,omitempty"` // its write-ahead record, while one exists
}

func (h Holder) String() string {
	if h.Action == "" {
		return "an action whose holder has not yet recorded itself"
	}
	s := fmt.Sprintf("%s since %s (pid %d", h.Action, h.Since.Local().Format(time.TimeOnly), h.PID)
	if h.Operator != "" {
		s += " by " + h.Operator
	}
	if h.State != "" {
		s += ", state file " + h.State
	}
	return s + ")"
}

// ErrHeld is returned (wrapped, with the holder) when another process holds the lock.
var ErrHeld = errors.New("held by another rangekeeper process")

// HeldError names the holder.
type HeldError struct{ Holder Holder }

func (e *HeldError) Error() string { return fmt.Sprintf("%v: %s", ErrHeld, e.Holder) }
func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held sandbox lock.
type Lock struct {
	f      *os.File
	holder Holder
}

// Acquire takes the sandbox's lock without waiting. prev is the record of an earlier holder that
// died with a write-ahead record open (nil when the lock was released cleanly).
func Acquire(dir string, h Holder) (l *Lock, prev *Holder, err error) {
	if err := os.MkdirAll(dir, 0o1777); err != nil {
		return nil, nil, fmt.Errorf("lock directory %s: %w", dir, err)
	}
	_ = os.Chmod(dir, 0o1777) // shared by every user's rangekeeper on this host
	path := lockPath(dir, h.Sandbox)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Chmod(0o666)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil, &HeldError{Holder: readHolder(f)}
		}
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if old := read(f); old.Record != 0 {
		prev = &old
	}
	l = &Lock{f: f, holder: h}
	if prev != nil && prev.Record != 0 && h.Record == 0 {
		// Keep naming the unfinished action until whoever recovers it says it is done.
		h.Record, h.State = prev.Record, prev.State
		l.holder = h
	}
	if err := l.write(); err != nil {
		l.Release()
		return nil, nil, err
	}
	return l, prev, nil
}

// SetRecord names the write-ahead record of the action under way (0: none), durably.
func (l *Lock) SetRecord(state string, record uint64) error {
	l.holder.State, l.holder.Record = state, record
	return l.write()
}

// Release empties the file (the action ended cleanly, or its record was recovered) and unlocks.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if l.holder.Record == 0 {
		_ = l.f.Truncate(0)
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

func (l *Lock) write() error {
	raw, err := json.Marshal(l.holder)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	if _, err := l.f.WriteAt(raw, 0); err != nil {
		return err
	}
	return l.f.Sync()
}

// holderWriteWait bounds how long a refused process waits for the holder to finish writing its
// record: the holder takes the lock first and writes who it is just after, so a reader may land
// in between (or between its truncate and write) and would otherwise name nobody.
const holderWriteWait = 200 * time.Millisecond

func readHolder(f *os.File) Holder {
	deadline := time.Now().Add(holderWriteWait)
	for {
		h := read(f)
		if h.Action != "" || time.Now().After(deadline) {
			return h
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func read(f *os.File) Holder {
	var h Holder
	raw, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err == nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, &h)
	}
	return h
}

func lockPath(dir, sandbox string) string {
	sum := sha256.Sum256([]byte(sandbox))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock")
}

// Held reports, without taking it, whether a live process holds the sandbox's lock.
func Held(dir, sandbox string) bool {
	f, err := os.Open(lockPath(dir, sandbox))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

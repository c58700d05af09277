package state

import (
	"os"
	"time"
)

// Generation identifies the state file's content as last committed by any process (its size and
// modification time), so a reader that polls for other processes' changes can skip re-reading
// a file nobody wrote: a stat instead of an open, a map and a close.
type Generation struct {
	mod  time.Time
	size int64
}

// Generation returns the file's current generation (the zero one if it cannot be read).
func (db *DB) Generation() Generation {
	fi, err := os.Stat(db.path)
	if err != nil {
		return Generation{}
	}
	return Generation{mod: fi.ModTime(), size: fi.Size()}
}

// recentWrite is how long after a write a generation is not trusted: a file system with coarse
// timestamps gives two writes within one tick the same modification time.
const recentWrite = 2 * time.Second

// Unchanged reports whether the file is known not to have been written since g was taken: same
// size and modification time, that time older than recentWrite, and g not the zero one.
func (g Generation) Unchanged(now Generation, at time.Time) bool {
	return !g.mod.IsZero() && g == now && at.Sub(g.mod) >= recentWrite
}

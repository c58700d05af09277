package state

import (
	"path/filepath"
	"testing"
	"time"
)

// A generation changes with every committed write, by this or another handle on the file, and
// is not trusted right after a write.
func TestGenerationChangesWithEveryWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(path) // another process's handle
	if err != nil {
		t.Fatal(err)
	}
	g := db.Generation()
	later := time.Now().Add(time.Hour)
	if !g.Unchanged(db.Generation(), later) {
		t.Fatal("an unwritten file's generation moved")
	}
	if g.Unchanged(db.Generation(), time.Now()) {
		t.Error("a generation trusted within recentWrite of the last write")
	}
	if err := other.RecordSession(Session{Start: time.Now(), Last: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if g.Unchanged(db.Generation(), later) {
		t.Fatal("a write by another handle left the generation unchanged")
	}
	if (Generation{}).Unchanged(Generation{}, later) {
		t.Error("the zero generation (file unreadable) counted as unchanged")
	}
}

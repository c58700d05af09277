package buffer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// ErrStale says this poll could not read the database (a writer holds it locked, or the read
// took too long); the state from the last good poll stands and the next poll retries.
var ErrStale = errors.New("sample buffer busy; showing the last state read")

// PollTimeout bounds one poll, so a locked or slow database never blocks a caller for long.
const PollTimeout = 250 * time.Millisecond

// busyTimeoutMS is SQLite's own wait for a lock before it answers SQLITE_BUSY. Short: a reader
// that waits long on a rollback-journal database would also delay Inspect's writer.
const busyTimeoutMS = 50

// Reader tails one sample-buffer database. It never writes: the database is opened with
// mode=ro (never immutable=1, which would read torn pages of a live WAL database), and each
// read is one short transaction that is never held across polls, so checkpoints are not starved.
// A Reader is safe for concurrent use.
type Reader struct {
	path string

	mu      sync.Mutex
	db      *sql.DB
	version int64
	cursor  int64
	samples map[Key]*fold
	order   []Key
	ended   bool
	changed time.Time
}

// Open prepares a reader of the database at path; nothing is read until Poll.
func Open(path string) *Reader {
	return &Reader{path: path, version: -1, samples: map[Key]*fold{}}
}

// Path is the database file.
func (r *Reader) Path() string { return r.path }

// Ended reports whether the database file has gone (Inspect unlinks it when the eval ends).
func (r *Reader) Ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// Close releases the database handle; the folded state stays readable.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closeLocked()
}

func (r *Reader) closeLocked() error {
	if r.db == nil {
		return nil
	}
	err := r.db.Close()
	r.db = nil
	return err
}

func (r *Reader) open() (*sql.DB, error) {
	if r.db != nil {
		return r.db, nil
	}
	// mode=ro also keeps the reader from re-creating a database Inspect has just unlinked.
	dsn := "file:" + (&url.URL{Path: r.path}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(" + fmt.Sprint(busyTimeoutMS) + ")"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	r.db = db
	return db, nil
}

// Poll reads what changed since the last poll: the version counter first (one indexed read when
// nothing changed), then the samples rows and the events past the cursor. changed says whether
// the folded state moved. A missing file ends the eval (ended, no error); ErrStale means retry
// next poll; any other error names the file and is per-source, never fatal to the caller.
func (r *Reader) Poll(ctx context.Context) (changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false, nil
	}
	if _, err := os.Stat(r.path); errors.Is(err, fs.ErrNotExist) {
		r.closeLocked()
		r.ended = true
		for _, k := range r.order {
			if f := r.samples[k]; !f.st.Status.Done() {
				f.st.Status = StatusEnded
				f.pending = map[string]Command{}
				f.refreshPending()
				f.dirty = true
			}
		}
		r.changed = time.Now()
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("sample buffer %s: %w", r.path, err)
	}
	db, err := r.open()
	if err != nil {
		return false, fmt.Errorf("sample buffer %s: %w", r.path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, PollTimeout)
	defer cancel()
	changed, err = r.read(ctx, db)
	if err != nil {
		if isStale(ctx, err) {
			return changed, ErrStale
		}
		// Drop the handle: a replaced or damaged file is reopened afresh next poll.
		r.closeLocked()
		return changed, fmt.Errorf("sample buffer %s: %w", r.path, err)
	}
	return changed, nil
}

type eventRow struct {
	id      int64
	eventID string
	key     Key
	data    []byte
}

// read is one short read transaction; the rows are folded after it ends.
func (r *Reader) read(ctx context.Context, db *sql.DB) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose
	var version int64
	if err := tx.QueryRowContext(ctx, `SELECT version FROM task_database`).Scan(&version); err != nil {
		return false, err
	}
	if version == r.version {
		return false, nil
	}
	present := map[Key][]byte{}
	rows, err := tx.QueryContext(ctx, `SELECT id, epoch, data FROM samples`)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var k Key
		var data []byte
		if err := rows.Scan(&k.ID, &k.Epoch, &data); err != nil {
			rows.Close()
			return false, err
		}
		present[k] = data
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	var evs []eventRow
	rows, err = tx.QueryContext(ctx, `SELECT id, event_id, sample_id, sample_epoch, data FROM events WHERE id > ? ORDER BY id`, r.cursor)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var e eventRow
		var eid sql.NullString
		if err := rows.Scan(&e.id, &eid, &e.key.ID, &e.key.Epoch, &e.data); err != nil {
			rows.Close()
			return false, err
		}
		e.eventID = eid.String
		evs = append(evs, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	_ = tx.Rollback()

	now := time.Now()
	r.version = version
	for _, e := range evs {
		f := r.fold(e.key)
		f.apply(e.id, e.eventID, e.data)
		f.st.Updated = now
		r.cursor = e.id
	}
	for k, data := range present {
		f := r.fold(k)
		f.applySummary(data)
		f.st.Updated = now
	}
	for _, k := range r.order {
		f := r.samples[k]
		if _, ok := present[k]; ok || f.st.Status == StatusFlushed || f.st.Status == StatusInit {
			continue
		}
		// The row left the buffer: flushed to the .eval (or dropped for a retry). Keep what we
		// knew; the score comes from the .eval.
		f.st.Status = StatusFlushed
		f.pending = map[string]Command{}
		f.refreshPending()
		f.st.Updated, f.dirty = now, true
	}
	r.changed = now
	return true, nil
}

func (r *Reader) fold(k Key) *fold {
	f, ok := r.samples[k]
	if !ok {
		f = newFold(k)
		r.samples[k] = f
		r.order = append(r.order, k)
	}
	return f
}

// isStale tells a lock or a timeout (retry next poll) from a real failure.
func isStale(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
			return true
		}
	}
	// A database being created has no tables yet for a moment.
	return strings.Contains(err.Error(), "no such table")
}

// Samples returns every sample this reader has seen, in first-seen order. A sample unchanged
// since the last call comes back as the same copy (its slices shared): treat them as read-only.
func (r *Reader) Samples() []SampleState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]SampleState, 0, len(r.order))
	for _, k := range r.order {
		f := r.samples[k]
		if f.dirty || f.copy.ID == "" {
			f.copy, f.dirty = f.st.Clone(), false
		}
		out = append(out, f.copy)
	}
	return out
}

// Sample returns a copy of one sample's state.
func (r *Reader) Sample(k Key) (SampleState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.samples[k]
	if !ok {
		return SampleState{}, false
	}
	return f.st.Clone(), true
}

// Output is the kept output (stderr, a blank line, stdout, as Inspect joins them) of one
// command by its Seq; false once the command has aged out of the last MaxCommands.
func (r *Reader) Output(k Key, seq int64) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.samples[k]
	if !ok {
		return "", false
	}
	out, ok := f.outputs[seq]
	return out, ok
}

// AttachmentPrefix marks a string Inspect moved to the attachments table (over 100 chars).
const AttachmentPrefix = "attachment://"

// Resolve replaces an attachment://<hash> reference by its content, read on demand in one short
// transaction; other strings come back unchanged.
func (r *Reader) Resolve(ctx context.Context, k Key, s string) (string, error) {
	hash, ok := strings.CutPrefix(s, AttachmentPrefix)
	if !ok {
		return s, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return s, fmt.Errorf("sample buffer %s: gone (eval ended)", r.path)
	}
	db, err := r.open()
	if err != nil {
		return s, fmt.Errorf("sample buffer %s: %w", r.path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, PollTimeout)
	defer cancel()
	var content string
	// Attachments are content-addressed. Before 0.3.206 the hash was unique across the whole
	// buffer, so a string two samples share is stored once, under the first: look the hash up
	// anywhere, this sample's row first.
	err = db.QueryRowContext(ctx, `SELECT content FROM attachments WHERE hash = ?
		ORDER BY (sample_id = ? AND sample_epoch = ?) DESC LIMIT 1`, hash, k.ID, k.Epoch).Scan(&content)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return s, fmt.Errorf("sample buffer %s: attachment %s (sample %s) not found", r.path, hash, k)
	case err != nil && isStale(ctx, err):
		return s, ErrStale
	case err != nil:
		return s, fmt.Errorf("sample buffer %s: %w", r.path, err)
	}
	return content, nil
}

// Changed is when the folded state last moved.
func (r *Reader) Changed() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

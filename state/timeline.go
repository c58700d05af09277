package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// The timeline's buckets are created on first write (no schema step: a file without them simply
// has no timeline yet): one sub-bucket per sandbox, keyed by time then sequence, and the
// sessions rangekeeper recorded in, so gaps in recording can be shown.
var (
	bucketTimeline = []byte("timeline")
	bucketSessions = []byte("timeline-sessions")
)

// Timeline sources.
const (
	SourceBackend     = "backend"     // what the engine reported (sandbox.Activity)
	SourceJournal     = "journal"     // rangekeeper's own actions
	SourceProbe       = "probe"       // escape-probe results
	SourcePosture     = "posture"     // the live posture's findings changed
	SourceRangekeeper = "rangekeeper" // recording started, stopped, or had a gap
)

// TimelineEntry is one thing on a sandbox's timeline.
type TimelineEntry struct {
	Time   time.Time         `json:"time" yaml:"time"`
	Source string            `json:"source" yaml:"source"`
	Kind   string            `json:"kind" yaml:"kind"`
	Member string            `json:"member,omitempty" yaml:"member,omitempty"`
	Actor  string            `json:"actor,omitempty" yaml:"actor,omitempty"`
	Detail string            `json:"detail,omitempty" yaml:"detail,omitempty"`
	Attrs  map[string]string `json:"attrs,omitempty" yaml:"attrs,omitempty"`
}

// Retention bounds what the timeline keeps per sandbox.
type Retention struct {
	MaxAge     time.Duration // 0: 30 days
	MaxEntries int           // 0: 5,000
}

func (r Retention) norm() Retention {
	if r.MaxAge <= 0 {
		r.MaxAge = 30 * 24 * time.Hour
	}
	if r.MaxEntries <= 0 {
		r.MaxEntries = 5000
	}
	return r
}

func timeKey(t time.Time, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
	return binary.BigEndian.AppendUint64(k, seq)
}

// RecordActivity appends the backends' activity to the sandboxes' timelines in one transaction.
// Details and attributes pass the redaction layer.
func (db *DB) RecordActivity(acts []sandbox.Activity) error {
	if len(acts) == 0 {
		return nil
	}
	return db.update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(bucketTimeline)
		if err != nil {
			return err
		}
		for _, a := range acts {
			if a.SandboxID == "" {
				continue
			}
			e := TimelineEntry{Time: a.Time.UTC(), Source: SourceBackend, Kind: string(a.Kind), Member: a.Member, Actor: a.Actor,
				Detail: redact.Message(a.Detail), Attrs: redactAttrs(a.Attrs)}
			if err := putTimeline(root, a.SandboxID, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// SandboxEntry is a timeline entry and the sandbox it belongs to.
type SandboxEntry struct {
	SandboxID string
	Entry     TimelineEntry
}

// RecordTimeline appends entries of any source (posture changes) to their sandboxes' timelines,
// all in one transaction: a fleet's first posture check is one entry per sandbox, and one
// transaction each (open, write, fsync, close) made thousands of them.
func (db *DB) RecordTimeline(es ...SandboxEntry) error {
	if len(es) == 0 {
		return nil
	}
	return db.update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(bucketTimeline)
		if err != nil {
			return err
		}
		for _, se := range es {
			e := se.Entry
			e.Detail, e.Attrs = redact.Message(e.Detail), redactAttrs(e.Attrs)
			if err := putTimeline(root, se.SandboxID, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func putTimeline(root *bolt.Bucket, sandboxID string, e TimelineEntry) error {
	b, err := root.CreateBucketIfNotExists([]byte(sandboxID))
	if err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	seq, _ := b.NextSequence()
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return b.Put(timeKey(e.Time, seq), raw)
}

func redactAttrs(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = redact.Message(v)
	}
	return out
}

// PruneTimeline applies retention to every sandbox's timeline (and the sessions): entries older
// than MaxAge go, then the oldest beyond MaxEntries. It returns how many entries were removed.
func (db *DB) PruneTimeline(r Retention, now time.Time) (int, error) {
	r = r.norm()
	cutoff := timeKey(now.Add(-r.MaxAge), 0)
	removed := 0
	err := db.update(func(tx *bolt.Tx) error {
		if s := tx.Bucket(bucketSessions); s != nil {
			n, err := pruneBucket(s, cutoff, r.MaxEntries)
			if err != nil {
				return err
			}
			removed += n
		}
		root := tx.Bucket(bucketTimeline)
		if root == nil {
			return nil
		}
		var empty [][]byte
		err := root.ForEachBucket(func(name []byte) error {
			b := root.Bucket(name)
			n, err := pruneBucket(b, cutoff, r.MaxEntries)
			removed += n
			if err == nil && b.Stats().KeyN == 0 {
				empty = append(empty, append([]byte(nil), name...))
			}
			return err
		})
		for _, name := range empty {
			if err == nil {
				err = root.DeleteBucket(name)
			}
		}
		return err
	})
	return removed, err
}

func pruneBucket(b *bolt.Bucket, cutoff []byte, maxEntries int) (int, error) {
	var drop [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && string(k) < string(cutoff); k, _ = c.Next() {
		drop = append(drop, append([]byte(nil), k...))
	}
	keep := b.Stats().KeyN - len(drop)
	for k, _ := c.First(); k != nil && keep > maxEntries; k, _ = c.Next() {
		if string(k) < string(cutoff) {
			continue // already dropped for age
		}
		drop = append(drop, append([]byte(nil), k...))
		keep--
	}
	for _, k := range drop {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(drop), nil
}

// Session is one period rangekeeper recorded the timeline: from Start to Last (the last
// heartbeat, or the clean stop).
type Session struct {
	Start time.Time `json:"start"`
	Last  time.Time `json:"last"`
	Clean bool      `json:"clean"` // stopped normally (not killed)
}

// RecordSession writes (or updates: same Start) a recording session.
func (db *DB) RecordSession(s Session) error {
	return db.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketSessions)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(s)
		if err != nil {
			return err
		}
		return b.Put(timeKey(s.Start.UTC(), 0), raw)
	})
}

// Sessions lists the recording sessions, oldest first.
func (db *DB) Sessions() ([]Session, error) {
	var out []Session
	err := db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var s Session
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("timeline session: %w", err)
			}
			out = append(out, s)
			return nil
		})
	})
	return out, err
}

// TimelineQuery selects a sandbox's timeline.
type TimelineQuery struct {
	SandboxID string
	Since     time.Time // zero: everything kept
	Limit     int       // the newest Limit entries (0: all)
}

// Timeline merges, oldest first, what was recorded for a sandbox (the backend's activity and
// posture changes) with the journal's entries for it, its probe results, and rangekeeper's
// recording sessions: where it started, stopped, and the gaps in between when it did not run.
func (db *DB) Timeline(q TimelineQuery) ([]TimelineEntry, error) {
	var out []TimelineEntry
	err := db.view(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketTimeline)
		if root == nil {
			return nil
		}
		b := root.Bucket([]byte(q.SandboxID))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.First()
		if !q.Since.IsZero() {
			k, v = c.Seek(timeKey(q.Since, 0))
		}
		for ; k != nil; k, v = c.Next() {
			var e TimelineEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("timeline of %s: %w", q.SandboxID, err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	journal, err := db.Journal(JournalQuery{Target: q.SandboxID})
	if err != nil {
		return nil, err
	}
	for _, j := range journal {
		e := TimelineEntry{Time: j.Time.UTC(), Source: SourceJournal, Kind: j.Action, Actor: j.Operator, Attrs: j.Params}
		e.Detail = string(j.Phase)
		if j.Phase == PhaseOutcome {
			e.Detail = j.Outcome
			if j.Error != "" {
				e.Detail += ": " + j.Error
			}
		}
		out = append(out, e)
	}
	probes, err := db.Probes(q.SandboxID, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range probes {
		out = append(out, TimelineEntry{Time: p.Time.UTC(), Source: SourceProbe, Kind: "probe", Detail: p.Summary, Attrs: nonEmpty("worst", p.Worst)})
	}
	sessions, err := db.Sessions()
	if err != nil {
		return nil, err
	}
	out = append(out, sessionEntries(sessions)...)
	out = filterSince(out, q.Since)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return out, nil
}

// sessionEntries turns sessions into start, stop and gap entries: a session that did not stop
// cleanly ends at its last heartbeat (rangekeeper was killed or the host went down).
func sessionEntries(ss []Session) []TimelineEntry {
	var out []TimelineEntry
	for i, s := range ss {
		out = append(out, TimelineEntry{Time: s.Start.UTC(), Source: SourceRangekeeper, Kind: "recording-start", Detail: "rangekeeper started recording"})
		if i+1 < len(ss) {
			stop := "stopped"
			if !s.Clean {
				stop = "last heard (not stopped cleanly)"
			}
			out = append(out, TimelineEntry{Time: s.Last.UTC(), Source: SourceRangekeeper, Kind: "gap",
				Detail: fmt.Sprintf("recording %s; nothing recorded for %s until the next start", stop, ss[i+1].Start.Sub(s.Last).Round(time.Second)),
				Attrs:  map[string]string{"until": ss[i+1].Start.UTC().Format(time.RFC3339Nano)}})
		} else if s.Clean {
			out = append(out, TimelineEntry{Time: s.Last.UTC(), Source: SourceRangekeeper, Kind: "recording-stop", Detail: "rangekeeper stopped recording"})
		}
	}
	return out
}

func filterSince(es []TimelineEntry, since time.Time) []TimelineEntry {
	if since.IsZero() {
		return es
	}
	out := es[:0]
	for _, e := range es {
		if !e.Time.Before(since) {
			out = append(out, e)
		}
	}
	return out
}

func nonEmpty(k, v string) map[string]string {
	if v == "" {
		return nil
	}
	return map[string]string{k: v}
}

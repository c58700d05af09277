package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// The containment watch's buckets. They are created on first write and read as empty
// until then, so files written before them need no migration.
var (
	bucketBaselines   = []byte("baselines")
	bucketAlerts      = []byte("alerts")
	bucketQuarantines = []byte("quarantines")
)

// Alert kinds.
const (
	AlertDrift = "drift" // a sandbox's posture weakened against its baseline
	AlertExec  = "exec"  // a process was started inside a sandbox member
)

// Alert is one weakening the containment watch saw in a running sandbox: what changed (Before →
// After), the event that changed it and who or what caused it when the engine says. It never
// carries an exec's arguments.
type Alert struct {
	ID        uint64            `json:"id"`
	Time      time.Time         `json:"time"`
	SandboxID string            `json:"sandbox"`
	Kind      string            `json:"kind"`
	Severity  sandbox.Severity  `json:"severity"`
	Rule      string            `json:"rule,omitempty"`
	Member    string            `json:"member,omitempty"`
	Summary   string            `json:"summary"`
	Before    string            `json:"before,omitempty"`
	After     string            `json:"after,omitempty"`
	Event     *sandbox.Activity `json:"event,omitempty"`
	Cause     string            `json:"cause,omitempty"` // who or what, when the engine says
	Hook      string            `json:"hook,omitempty"`  // the alert hook's outcome: "ok" or why it failed
	Ack       *Ack              `json:"ack,omitempty"`
}

// Ack is an operator's acknowledgement of an alert.
type Ack struct {
	Operator string    `json:"operator"`
	Time     time.Time `json:"time"`
}

// Baseline is the posture a sandbox is compared with: recorded when it is first seen and again
// after a probe or verify. Alerted holds the findings (by key) already alerted since, with the
// severity alerted, so a weakening raises one alert, not one per refresh or restart.
type Baseline struct {
	SandboxID string                      `json:"sandbox"`
	Recorded  time.Time                   `json:"recorded"`
	Reason    string                      `json:"reason"`
	Findings  []sandbox.Finding           `json:"findings,omitempty"`
	Alerted   map[string]sandbox.Severity `json:"alerted,omitempty"`
}

// QuarantineRecord is what a quarantine changed, kept until release restores it. Plan is the
// backend's own record (Docker: endpoints, aliases, static addresses; Kubernetes: the policies it
// created; Proxmox: the NIC strings).
type QuarantineRecord struct {
	SandboxID string          `json:"sandbox"`
	Backend   string          `json:"backend"`
	Operator  string          `json:"operator,omitempty"`
	Time      time.Time       `json:"time"`
	Plan      json.RawMessage `json:"plan"`
}

// keyCursor holds the journal sequence the watch has read up to (in the baselines bucket).
const keyCursor = "\x00journal-cursor"

// baselinesPerTx bounds the baselines one transaction writes (about 2 KB each).
const baselinesPerTx = 1000

// PutBaselines stores baselines, a thousand to a transaction: each is a record of its own, and
// one transaction for 25,000 of them held all their encodings at once.
func (db *DB) PutBaselines(bs []Baseline) error {
	if len(bs) == 0 {
		return nil
	}
	// In key order, each transaction rewrites a run of the tree's pages rather than some of
	// most of them.
	order := make([]int32, len(bs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(bs[a].SandboxID, bs[b].SandboxID) })
	chunks := (len(order) + baselinesPerTx - 1) / baselinesPerTx
	return db.updateChunks(chunks, func(tx *bolt.Tx, i int) error {
		part := order[i*baselinesPerTx : min(len(order), (i+1)*baselinesPerTx)]
		raws, err := encodeBaselines(bs, part)
		if err != nil {
			return err
		}
		bk, err := tx.CreateBucketIfNotExists(bucketBaselines)
		if err != nil {
			return err
		}
		for j, k := range part {
			if err := bk.Put([]byte(bs[k].SandboxID), raws[j]); err != nil {
				return err
			}
		}
		return nil
	})
}

// encodeBaselines seals the baselines bs[k] for each k in which.
func encodeBaselines(bs []Baseline, which []int32) ([][]byte, error) {
	raws := make([][]byte, len(which))
	for i, k := range which {
		raw, err := json.Marshal(bs[k])
		if err != nil {
			return nil, fmt.Errorf("state baselines: encode %q: %w", bs[k].SandboxID, err)
		}
		raws[i] = seal(raw)
	}
	return raws, nil
}

// DeleteBaselines forgets the baselines of sandboxes that are gone.
func (db *DB) DeleteBaselines(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return db.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketBaselines)
		if bk == nil {
			return nil
		}
		for _, id := range ids {
			if err := bk.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Baselines returns every stored baseline.
func (db *DB) Baselines() ([]Baseline, error) {
	var out []Baseline
	err := db.eachIn(bucketBaselines, func(k, v []byte) error {
		if string(k) == keyCursor {
			return nil
		}
		var b Baseline
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("state baselines %q: %w", k, err)
		}
		out = append(out, b)
		return nil
	})
	return out, err
}

// WatchCursor is the journal sequence the containment watch has read up to.
func (db *DB) WatchCursor() (uint64, error) {
	var seq uint64
	err := db.view(func(tx *bolt.Tx) error {
		if bk := tx.Bucket(bucketBaselines); bk != nil {
			if raw := bk.Get([]byte(keyCursor)); len(raw) == 8 {
				seq = binary.BigEndian.Uint64(raw)
			}
		}
		return nil
	})
	return seq, err
}

// SetWatchCursor records the journal sequence the containment watch has read up to.
func (db *DB) SetWatchCursor(seq uint64) error {
	return db.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketBaselines)
		if err != nil {
			return err
		}
		return bk.Put([]byte(keyCursor), seqKey(seq))
	})
}

// AddAlerts stores alerts in one transaction and returns them with their IDs set.
func (db *DB) AddAlerts(as []Alert) ([]Alert, error) {
	if len(as) == 0 {
		return as, nil
	}
	out := make([]Alert, len(as))
	copy(out, as)
	err := db.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketAlerts)
		if err != nil {
			return err
		}
		for i := range out {
			seq, err := bk.NextSequence()
			if err != nil {
				return err
			}
			out[i].ID = seq
			if out[i].Time.IsZero() {
				out[i].Time = time.Now().UTC()
			}
			raw, err := json.Marshal(out[i])
			if err != nil {
				return err
			}
			if err := bk.Put(seqKey(seq), seal(raw)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	return out, nil
}

// AlertQuery filters Alerts; zero values match everything.
type AlertQuery struct {
	Since     time.Time // only alerts at or after Since
	After     uint64    // only alerts with ID > After
	SandboxID string
	Open      bool // only alerts not acknowledged
}

// Alerts returns the alerts matching q, oldest first.
func (db *DB) Alerts(q AlertQuery) ([]Alert, error) {
	var out []Alert
	err := db.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketAlerts)
		if bk == nil {
			return nil
		}
		c := bk.Cursor()
		for k, v := c.Seek(seqKey(q.After + 1)); k != nil; k, v = c.Next() {
			var a Alert
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("alert %d: %w", binary.BigEndian.Uint64(k), err)
			}
			if (!q.Since.IsZero() && a.Time.Before(q.Since)) || (q.SandboxID != "" && a.SandboxID != q.SandboxID) || (q.Open && a.Ack != nil) {
				continue
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// ErrNoAlert is returned for an alert ID that names no alert.
var ErrNoAlert = fmt.Errorf("no such alert")

// updateAlert rewrites one alert in place.
func (db *DB) updateAlert(id uint64, fn func(a *Alert) error) (Alert, error) {
	var a Alert
	err := db.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketAlerts)
		var raw []byte
		if bk != nil {
			raw = bk.Get(seqKey(id))
		}
		if raw == nil {
			return fmt.Errorf("alert %d: %w", id, ErrNoAlert)
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		if err := fn(&a); err != nil {
			return err
		}
		out, err := json.Marshal(a)
		if err != nil {
			return err
		}
		return bk.Put(seqKey(id), seal(out))
	})
	return a, err
}

// AckAlert records that operator acknowledged alert id. Acknowledging twice keeps the first.
func (db *DB) AckAlert(id uint64, operator string) (Alert, error) {
	return db.updateAlert(id, func(a *Alert) error {
		if a.Ack == nil {
			a.Ack = &Ack{Operator: operator, Time: time.Now().UTC()}
		}
		return nil
	})
}

// SetAlertHook records the alert hook's outcome for alert id.
func (db *DB) SetAlertHook(id uint64, result string) error {
	_, err := db.updateAlert(id, func(a *Alert) error { a.Hook = result; return nil })
	return err
}

// PutQuarantine stores (or replaces) a sandbox's quarantine record.
func (db *DB) PutQuarantine(rec QuarantineRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return db.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketQuarantines)
		if err != nil {
			return err
		}
		return bk.Put([]byte(rec.SandboxID), seal(raw))
	})
}

// Quarantine fetches a sandbox's quarantine record; ok is false when it is not quarantined.
func (db *DB) Quarantine(sandboxID string) (rec QuarantineRecord, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketQuarantines)
		if bk == nil {
			return nil
		}
		raw := bk.Get([]byte(sandboxID))
		if raw == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(raw, &rec)
	})
	return rec, ok, err
}

// Quarantines lists every quarantined sandbox's record, by sandbox ID.
func (db *DB) Quarantines() ([]QuarantineRecord, error) {
	var out []QuarantineRecord
	err := db.eachIn(bucketQuarantines, func(k, v []byte) error {
		var r QuarantineRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("state quarantines %q: %w", k, err)
		}
		out = append(out, r)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].SandboxID < out[j].SandboxID })
	return out, err
}

// DeleteQuarantine removes a sandbox's quarantine record (after release).
func (db *DB) DeleteQuarantine(sandboxID string) error {
	return db.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketQuarantines)
		if bk == nil {
			return nil
		}
		return bk.Delete([]byte(sandboxID))
	})
}

// eachIn walks a bucket that may not exist yet.
func (db *DB) eachIn(bucket []byte, fn func(k, v []byte) error) error {
	return db.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucket)
		if bk == nil {
			return nil
		}
		return bk.ForEach(fn)
	})
}

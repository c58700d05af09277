package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Phase tells an intent entry (written before an action starts) from its outcome.
type Phase string

const (
	PhaseIntent  Phase = "intent"
	PhaseOutcome Phase = "outcome"
)

// Outcome values for outcome entries.
const (
	OutcomeOK        = "ok"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
	OutcomeRefused   = "refused"
	// OutcomeInterrupted: the daemon stopped (SIGTERM) and its grace ran out before the
	// action finished; the action was cancelled.
	OutcomeInterrupted = "interrupted"
)

// Identity is who acts and how they reached rangekeeper (action.Identity is this type, so
// packages beneath the action layer, like the watch, journal it too): every entry carries it.
type Identity struct {
	Operator    string `json:"operator"`              // a name: "alice", or "user@host" locally
	Transport   string `json:"transport"`             // "standalone", "socket" or "ssh"
	Fingerprint string `json:"fingerprint,omitempty"` // the SSH key's, when the transport has one
	Source      string `json:"source,omitempty"`      // the remote address, when the transport has one
}

// Stamp returns e carrying who: its operator, transport, key fingerprint and source.
func (who Identity) Stamp(e Entry) Entry {
	e.Operator, e.Transport, e.Fingerprint, e.Source = who.Operator, who.Transport, who.Fingerprint, who.Source
	return e
}

// Entry is one journal record. Seq is assigned on append and orders entries.
type Entry struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Operator string    `json:"operator"` // user@host, or an operators-file name
	// How the operator reached rangekeeper: "standalone", "socket" or "ssh"; the SSH key's
	// fingerprint and the remote address when the transport has them.
	Transport   string            `json:"transport,omitempty"`
	Fingerprint string            `json:"fingerprint,omitempty"`
	Source      string            `json:"source,omitempty"`
	Action      string            `json:"action"`
	Target      string            `json:"target"`
	Params      map[string]string `json:"params,omitempty"`
	Phase       Phase             `json:"phase"`
	Intent      uint64            `json:"intent,omitempty"` // outcome entries: the Seq of their intent
	Outcome     string            `json:"outcome,omitempty"`
	Error       string            `json:"error,omitempty"`
}

// Operator returns "user@host" for the current process.
func Operator() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return name + "@" + host
}

// secretish names parameters whose values must never be written.
var secretish = []string{"token", "password", "passwd", "secret", "credential", "apikey", "api_key", "private"}

// Redact replaces values of secret-looking parameter names; it is applied to every entry.
func Redact(params map[string]string) map[string]string {
	if len(params) == 0 {
		return params
	}
	out := make(map[string]string, len(params))
	for k, v := range params {
		lk := strings.ToLower(k)
		for _, s := range secretish {
			if strings.Contains(lk, s) {
				v = "[redacted]"
				break
			}
		}
		out[k] = v
	}
	return out
}

// Append writes e durably (bbolt fsyncs on commit) and returns it with Seq set.
// Once Append returns nil the entry survives a crash.
func (db *DB) Append(e Entry) (Entry, error) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if e.Operator == "" {
		e.Operator = Operator()
	}
	e.Params = Redact(e.Params)
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketJournal)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		e.Seq = seq
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return b.Put(seqKey(seq), seal(raw))
	})
	if err != nil {
		return Entry{}, fmt.Errorf("journal append: %w", err)
	}
	return e, nil
}

// JournalQuery filters Journal results; zero values match everything.
type JournalQuery struct {
	Target string
	After  uint64 // only entries with Seq > After
	Limit  int    // newest Limit entries (0: all)
}

// Journal returns entries in Seq order.
func (db *DB) Journal(q JournalQuery) ([]Entry, error) {
	var out []Entry
	err := db.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketJournal).Cursor()
		// Walk newest first so Limit is cheap, then reverse.
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if binary.BigEndian.Uint64(k) <= q.After {
				break
			}
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("journal entry %d: %w", binary.BigEndian.Uint64(k), err)
			}
			if q.Target != "" && e.Target != q.Target {
				continue
			}
			out = append(out, e)
			if q.Limit > 0 && len(out) >= q.Limit {
				break
			}
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

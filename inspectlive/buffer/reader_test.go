package buffer_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

func newDB(t *testing.T, wal bool) (*it.DB, *buffer.Reader) {
	t.Helper()
	// A space and a plus in the path, as macOS's "Application Support" and Inspect's log names have.
	path := filepath.Join(t.TempDir(), "Application Support", "inspect_ai", "samplebuffer", "abc123", "2026-08-22T10-00-00+00-00_ctf_tid.eval.4242.db")
	db := it.NewDB(t, path, wal)
	r := buffer.Open(path)
	t.Cleanup(func() { r.Close() })
	return db, r
}

func poll(t *testing.T, r *buffer.Reader) bool {
	t.Helper()
	changed, err := r.Poll(context.Background())
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return changed
}

func one(t *testing.T, r *buffer.Reader, id string, epoch int) buffer.SampleState {
	t.Helper()
	s, ok := r.Sample(buffer.Key{ID: id, Epoch: epoch})
	if !ok {
		t.Fatalf("sample %s/%d not seen; have %+v", id, epoch, r.Samples())
	}
	return s
}

func TestFold(t *testing.T) {
	tests := []struct {
		name   string
		events []it.Event
		check  func(t *testing.T, s buffer.SampleState)
	}{
		{"sandbox commands keep cmd and exit, not env", []it.Event{it.SandboxExec(1, "bash --login -c ls", 0, "a\nb"), it.SandboxExec(2, "bash --login -c false", 1, "")},
			func(t *testing.T, s buffer.SampleState) {
				if len(s.Commands) != 2 || s.Commands[1].Cmd != "bash --login -c false" || *s.Commands[1].Exit != 1 {
					t.Fatalf("commands %+v", s.Commands)
				}
				if !s.Commands[0].Time.Equal(time.Date(2026, 8, 22, 10, 0, 1, 0, time.UTC)) {
					t.Errorf("time %v", s.Commands[0].Time)
				}
				if strings.Contains(it.MustJSON(s), "sk-secret-value") {
					t.Error("an env value of the sandbox event leaked into the state")
				}
			}},
		{"a refused exec keeps its string result and reason", []it.Event{it.SandboxRefused(1, "bash --login -c 'curl 169.254.169.254'", "denied", "policy")},
			func(t *testing.T, s buffer.SampleState) {
				if len(s.Commands) != 1 || s.Commands[0].Exit != nil || s.Commands[0].Result != "denied" || s.Commands[0].Reason != "policy" {
					t.Fatalf("commands %+v", s.Commands)
				}
			}},
		{"pending tool call then completed with the same event id", []it.Event{it.ToolCall("t1", 1, "nmap -p- 10.0.0.2", true, ""), it.ToolCall("t2", 2, "id", true, ""), it.ToolCall("t2", 3, "id", false, "")},
			func(t *testing.T, s buffer.SampleState) {
				if s.Pending == nil || s.Pending.Cmd != "nmap -p- 10.0.0.2" || !s.Pending.Pending {
					t.Fatalf("pending %+v", s.Pending)
				}
			}},
		{"tokens count completed model events once", []it.Event{it.Model("m1", 1, 100, true), it.Model("m1", 2, 100, false), it.Model("m2", 3, 50, false), it.Model("m3", 4, 70, true)},
			func(t *testing.T, s buffer.SampleState) {
				if s.Tokens != 150 {
					t.Fatalf("tokens %d, want 150", s.Tokens)
				}
			}},
		{"errors, tool errors and limits", []it.Event{it.Error(1, "sandbox_unavailable"), it.ToolCall("t9", 2, "sleep 999", false, "timed out"), it.Limit(3, "token", "token limit 1000 exceeded")},
			func(t *testing.T, s buffer.SampleState) {
				if len(s.Errors) != 2 || s.Errors[0] != "sandbox_unavailable" || s.Errors[1] != "bash: timed out" {
					t.Errorf("errors %q", s.Errors)
				}
				if s.Limit != "token" || len(s.Limits) != 1 || s.Limits[0] != "token: token limit 1000 exceeded" {
					t.Errorf("limit %q %q", s.Limit, s.Limits)
				}
			}},
		{"score event", []it.Event{it.Score(9, "C")},
			func(t *testing.T, s buffer.SampleState) {
				if s.Score != "C" {
					t.Errorf("score %q", s.Score)
				}
			}},
		{"proxmox logger lines", []it.Event{
			it.Logger(1, "Acquired instance pve1 from pool 'default': host=10.1.1.5 port=8006 node=pve-a"),
			it.Logger(2, "Creating VM 1/2: victim"), it.Logger(3, "VM victim (ID=501) is ready"), it.Logger(4, "VM attacker (ID=502) is ready")},
			func(t *testing.T, s buffer.SampleState) {
				p := s.Proxmox
				if p == nil || p.Node != "pve-a" || p.Host != "10.1.1.5" || p.Port != "8006" || p.VMs[501] != "victim" || p.VMs[502] != "attacker" {
					t.Fatalf("proxmox hint %+v", p)
				}
				if len(s.Logger) != 4 {
					t.Errorf("logger lines %q", s.Logger)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, r := newDB(t, true)
			db.StartSample(t, "s1", 1, "uuid-1")
			db.AddEvents(t, "s1", 1, tt.events...)
			poll(t, r)
			s := one(t, r, "s1", 1)
			if s.UUID != "uuid-1" || s.Status != buffer.StatusRunning {
				t.Fatalf("summary not folded: %+v", s)
			}
			tt.check(t, s)
		})
	}
}

func TestIncrementalAndIdle(t *testing.T) {
	db, r := newDB(t, true)
	db.AddEvents(t, "s1", 1, it.SandboxExec(1, "whoami", 0, "root"))
	poll(t, r)
	if s := one(t, r, "s1", 1); s.Status != buffer.StatusInit {
		t.Fatalf("events before the samples row should read as init, got %s", s.Status)
	}
	if poll(t, r) {
		t.Fatal("a poll with an unchanged version reported a change")
	}
	db.StartSample(t, "s1", 1, "u1")
	db.AddEvents(t, "s1", 1, it.SandboxExec(2, "uname -a", 0, "Linux"))
	if !poll(t, r) {
		t.Fatal("new rows not seen")
	}
	s := one(t, r, "s1", 1)
	if len(s.Commands) != 2 || s.Status != buffer.StatusRunning {
		t.Fatalf("state %+v", s)
	}
	out, ok := r.Output(buffer.Key{ID: "s1", Epoch: 1}, s.Commands[1].Seq)
	if !ok || out != "Linux" {
		t.Fatalf("output on demand %q %v", out, ok)
	}
	db.CompleteSample(t, "s1", 1, "u1", map[string]any{"scores": map[string]any{"includes": map[string]any{"value": 1}},
		"model_usage": map[string]any{"openai/gpt": map[string]any{"total_tokens": 1234}}, "limit": "message"})
	poll(t, r)
	s = one(t, r, "s1", 1)
	if s.Status != buffer.StatusCompleted || s.Score != "1" || s.Usage != 1234 || s.Limit != "message" {
		t.Fatalf("completed state %+v", s)
	}
}

func TestSampleFlushedMidRead(t *testing.T) {
	db, r := newDB(t, true)
	for _, id := range []string{"a", "b"} {
		db.StartSample(t, id, 1, "u-"+id)
		db.AddEvents(t, id, 1, it.SandboxExec(1, "cat flag.txt", 0, ""), it.Score(2, "C"))
	}
	poll(t, r)
	db.CompleteSample(t, "a", 1, "u-a", nil)
	db.RemoveSample(t, "a", 1) // log_buffer reached: a goes to the .eval
	poll(t, r)
	a, b := one(t, r, "a", 1), one(t, r, "b", 1)
	if a.Status != buffer.StatusFlushed || a.UUID != "u-a" || len(a.Commands) != 1 || a.Score != "C" {
		t.Fatalf("flushed sample lost its last state: %+v", a)
	}
	if b.Status != buffer.StatusRunning {
		t.Fatalf("other sample disturbed: %+v", b)
	}
}

// Inspect deletes a failed attempt's rows and starts the sample over: the new attempt must not
// inherit the old one's commands or errors.
func TestRetriedSampleStartsOver(t *testing.T) {
	db, r := newDB(t, true)
	db.StartSample(t, "a", 1, "u-first")
	db.AddEvents(t, "a", 1, it.SampleInit(0), it.SandboxExec(1, "rm -rf /tmp/x", 1, ""), it.Error(2, "sandbox_unavailable"))
	poll(t, r)
	db.RemoveSample(t, "a", 1)
	db.AddEvents(t, "a", 1, it.SampleInit(10), it.SandboxExec(11, "ls", 0, ""))
	db.StartSample(t, "a", 1, "u-second")
	poll(t, r)
	s := one(t, r, "a", 1)
	if s.UUID != "u-second" || len(s.Commands) != 1 || s.Commands[0].Cmd != "ls" || len(s.Errors) != 0 || s.Status != buffer.StatusRunning || s.Retries != 1 {
		t.Fatalf("retried sample: %+v", s)
	}
}

func TestDatabaseDeletedMidRead(t *testing.T) {
	db, r := newDB(t, true)
	db.StartSample(t, "a", 1, "u-a")
	db.AddEvents(t, "a", 1, it.ToolCall("t1", 1, "ls", true, ""))
	poll(t, r)
	db.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db.Path + suffix)
	}
	changed, err := r.Poll(context.Background())
	if err != nil || !changed || !r.Ended() {
		t.Fatalf("deleted database: changed %v err %v ended %v", changed, err, r.Ended())
	}
	a := one(t, r, "a", 1)
	if a.Status != buffer.StatusEnded || a.Pending != nil || a.UUID != "u-a" {
		t.Fatalf("state after the eval ended: %+v", a)
	}
	if _, err := os.Stat(db.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the reader re-created the deleted database")
	}
	if changed, err := r.Poll(context.Background()); changed || err != nil {
		t.Fatalf("poll after end: %v %v", changed, err)
	}
}

// A writer holding the lock must cost a poll a bounded wait and leave the state as it was.
func TestLockedByWriter(t *testing.T) {
	for _, wal := range []bool{false, true} {
		name := map[bool]string{false: "rollback journal (before 0.3.237)", true: "WAL"}[wal]
		t.Run(name, func(t *testing.T) {
			db, r := newDB(t, wal)
			db.StartSample(t, "a", 1, "u-a")
			db.AddEvents(t, "a", 1, it.SandboxExec(1, "id", 0, ""))
			poll(t, r)

			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			begin := "BEGIN IMMEDIATE"
			if !wal {
				begin = "BEGIN EXCLUSIVE" // a writer mid-commit: readers are shut out
			}
			mustExec(t, conn, begin)
			mustExec(t, conn, `INSERT INTO events (event_id, sample_id, sample_epoch, data) VALUES ('x', 'a', 1, ?)`, it.MustJSON(it.SandboxExec(5, "uncommitted", 0, "").Data))
			mustExec(t, conn, `UPDATE task_database SET version = version + 1`)

			start := time.Now()
			_, err = r.Poll(ctx)
			took := time.Since(start)
			if took > 2*buffer.PollTimeout {
				t.Fatalf("poll blocked %v behind the writer", took)
			}
			if wal && err != nil {
				t.Fatalf("WAL readers are not blocked by a writer, got %v", err)
			}
			if !wal && !errors.Is(err, buffer.ErrStale) {
				t.Fatalf("locked database: want ErrStale, got %v", err)
			}
			if s := one(t, r, "a", 1); len(s.Commands) != 1 {
				t.Fatalf("state changed while locked: %+v", s.Commands)
			}
			mustExec(t, conn, "COMMIT")
			poll(t, r)
			if s := one(t, r, "a", 1); len(s.Commands) != 2 || s.Commands[1].Cmd != "uncommitted" {
				t.Fatalf("next poll did not recover: %+v", s.Commands)
			}
		})
	}
}

func mustExec(t *testing.T, c *sql.Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestAttachmentOnDemand(t *testing.T) {
	db, r := newDB(t, true)
	long := "python3 -c '" + strings.Repeat("print(1);", 20) + "'"
	db.StartSample(t, "a", 1, "u-a")
	db.AddAttachment(t, "a", 1, "9f8e7d", long)
	db.AddEvents(t, "a", 1, it.ToolCall("t1", 1, buffer.AttachmentPrefix+"9f8e7d", true, ""))
	poll(t, r)
	s := one(t, r, "a", 1)
	if s.Pending == nil || s.Pending.Cmd != buffer.AttachmentPrefix+"9f8e7d" {
		t.Fatalf("the fold should keep the reference, not resolve it: %+v", s.Pending)
	}
	got, err := r.Resolve(context.Background(), buffer.Key{ID: "a", Epoch: 1}, s.Pending.Cmd)
	if err != nil || got != long {
		t.Fatalf("resolve: %q %v", got, err)
	}
	if got, err := r.Resolve(context.Background(), buffer.Key{ID: "a", Epoch: 1}, "ls"); err != nil || got != "ls" {
		t.Fatalf("plain string: %q %v", got, err)
	}
	// Content-addressed: a string stored under another sample (pre-0.3.206 kept each hash once)
	// is the same string.
	if got, err := r.Resolve(context.Background(), buffer.Key{ID: "b", Epoch: 1}, buffer.AttachmentPrefix+"9f8e7d"); err != nil || got != long {
		t.Fatalf("shared attachment: %q %v", got, err)
	}
	if _, err := r.Resolve(context.Background(), buffer.Key{ID: "a", Epoch: 1}, buffer.AttachmentPrefix+"000000"); err == nil ||
		!strings.Contains(err.Error(), db.Path) {
		t.Fatalf("a missing attachment must fail, naming the file: %v", err)
	}
}

// The reader opens mode=ro: polling must leave the database bytes untouched.
func TestReaderNeverWrites(t *testing.T) {
	db, r := newDB(t, false)
	db.StartSample(t, "a", 1, "u-a")
	before, err := os.ReadFile(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r.Poll(context.Background())
	}
	after, _ := os.ReadFile(db.Path)
	if string(before) != string(after) {
		t.Fatal("polling changed the database file")
	}
}

func TestLegacySchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.eval.1.db")
	db := it.NewDBWithSchema(t, path, false, it.LegacySchema)
	r := buffer.Open(path)
	defer r.Close()
	db.StartSample(t, "1", 1, "")
	db.AddEvents(t, "1", 1, it.SandboxExec(1, "id", 0, ""), it.Model("m", 2, 42, false))
	poll(t, r)
	if s := one(t, r, "1", 1); s.Tokens != 42 || len(s.Commands) != 1 || s.Status != buffer.StatusRunning {
		t.Fatalf("pre-0.3.206 buffer: %+v", s)
	}
}

func TestNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.eval.1.db")
	os.WriteFile(path, []byte("this is not sqlite, it is long enough to have a header page maybe"), 0o644)
	r := buffer.Open(path)
	defer r.Close()
	_, err := r.Poll(context.Background())
	if err == nil || errors.Is(err, buffer.ErrStale) || !strings.Contains(err.Error(), path) {
		t.Fatalf("want an error naming %s, got %v", path, err)
	}
}

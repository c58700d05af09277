package state

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

func open(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestMigrationFromEmptyFileCreatesEveryBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "state.db")
	db := open(t, path)
	defer db.Close()
	v, err := db.Version()
	if err != nil || v != SchemaVersion {
		t.Fatalf("Version = %d, %v; want %d", v, err, SchemaVersion)
	}
	// Every later feature's bucket is usable at once.
	if _, err := db.Append(Entry{Action: "snapshot", Target: "docker:x/p", Phase: PhaseIntent}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSnapshot(SnapshotRecord{Info: sandbox.SnapshotInfo{ID: "s1", SandboxID: "docker:x/p"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutProbe(ProbeRecord{SandboxID: "docker:x/p", Summary: "ok", Report: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutDraft(Draft{Name: "d", Format: "compose", Content: "services: {}"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveInventory(InventoryRecord{Backend: "docker:x"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, []byte{0, 0, 0, 0, 0, 0, 0, 99})
	})
	db.Close()
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(newer schema) = %v; want an error naming the file and saying it is newer", err)
	}
}

// Opening a file already at this schema reads it and writes nothing: every workbench start opens
// the state file before its first frame, and a write transaction there cost two fdatasyncs.
// A file without the schema record (another tool's bbolt file, an older one) is still migrated.
func TestOpenWritesOnlyAFileThatNeedsMigrating(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open(t, path).Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, path)
	if v, err := db.Version(); err != nil || v != SchemaVersion {
		t.Fatalf("Version = %d, %v; want %d", v, err, SchemaVersion)
	}
	db.Close()
	if after, err := os.ReadFile(path); err != nil || string(after) != string(before) {
		t.Fatalf("reopening a current file changed it (read error %v); want it only read", err)
	}

	bare := filepath.Join(t.TempDir(), "bare.db")
	b, err := bolt.Open(bare, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err }); err != nil {
		t.Fatal(err)
	}
	b.Close()
	db = open(t, bare)
	defer db.Close()
	if v, err := db.Version(); err != nil || v != SchemaVersion {
		t.Fatalf("Version of a file without a schema record after Open = %d, %v; want %d", v, err, SchemaVersion)
	}
	if _, err := db.Append(Entry{Action: "snapshot", Target: "docker:x/p", Phase: PhaseIntent}); err != nil {
		t.Fatalf("the migrated file's journal: %v", err)
	}
}

func TestJournalAppendAndReadAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	in, err := db.Append(Entry{Action: "teardown", Target: "docker:a/p1", Phase: PhaseIntent, Params: map[string]string{"force": "false", "api_token": "s3cr3t"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(Entry{Action: "teardown", Target: "docker:a/p1", Phase: PhaseOutcome, Intent: in.Seq, Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(Entry{Action: "snapshot", Target: "docker:a/p2", Phase: PhaseIntent}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open(t, path)
	defer db.Close()
	all, err := db.Journal(JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Seq != 1 || all[2].Seq != 3 {
		t.Fatalf("journal = %+v; want 3 entries in order", all)
	}
	if all[0].Operator == "" || !strings.Contains(all[0].Operator, "@") || all[0].Time.IsZero() {
		t.Errorf("entry lacks operator user@host or time: %+v", all[0])
	}
	if all[0].Params["api_token"] != "[redacted]" || all[0].Params["force"] != "false" {
		t.Errorf("params = %v; secret-looking values must be redacted, others kept", all[0].Params)
	}
	p1, _ := db.Journal(JournalQuery{Target: "docker:a/p1"})
	if len(p1) != 2 || p1[1].Intent != p1[0].Seq {
		t.Errorf("target filter = %+v", p1)
	}
	last, _ := db.Journal(JournalQuery{Limit: 1})
	if len(last) != 1 || last[0].Seq != 3 {
		t.Errorf("limit 1 = %+v; want the newest", last)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "s3cr3t") {
		t.Error("a secret value reached the state file")
	}
}

func TestLockedFileFailsWithinTwoSecondsNamingTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	// Another process holds the file: a child re-exec of this test binary.
	cmd := exec.Command(os.Args[0], "-test.run=TestHelperHoldLock")
	cmd.Env = append(os.Environ(), "RK_HOLD_LOCK="+path)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil || string(buf[:5]) != "ready" {
		t.Fatalf("helper did not take the lock: %q %v", buf, err)
	}
	start := time.Now()
	_, err := Open(path)
	took := time.Since(start)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Open(locked) = %v; want ErrLocked", err)
	}
	if took > LockTimeout+time.Second {
		t.Errorf("Open took %s; want about %s", took, LockTimeout)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--state") {
		t.Errorf("error %q must name the file and what to do", err)
	}
}

// TestHelperHoldLock is not a test: the lock test runs it in a child process.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv("RK_HOLD_LOCK")
	if path == "" {
		t.Skip("helper process only")
	}
	// A process stuck inside a write transaction: it holds bbolt's exclusive lock.
	if _, err := Open(path); err != nil {
		os.Exit(3)
	}
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		os.Exit(3)
	}
	defer b.Close()
	os.Stdout.WriteString("ready\n")
	time.Sleep(time.Minute)
}

// TestCrashDuringAppendKeepsAcknowledgedEntries kills a writer with SIGKILL mid-append many
// times; every entry the writer reported as appended must be intact afterwards.
func TestCrashDuringAppendKeepsAcknowledgedEntries(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 4
	}
	path := filepath.Join(t.TempDir(), "state.db")
	acked := map[uint64]string{}
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=TestHelperAppendForever")
		cmd.Env = append(os.Environ(), "RK_APPEND="+path, "RK_ROUND="+strconv.Itoa(round))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Read acknowledgements for a short, varying time, then kill without warning. The time
		// counts from the first acknowledgement: on a loaded machine the helper can take longer
		// than that just to start, and a round killed before it writes proves nothing.
		delay := time.Duration(80+round*37%220) * time.Millisecond
		var deadline <-chan time.Time
		startup := time.After(30 * time.Second)
		lines := make(chan string, 1024)
		go func() {
			buf := make([]byte, 0, 4096)
			tmp := make([]byte, 512)
			for {
				n, err := out.Read(tmp)
				buf = append(buf, tmp[:n]...)
				for {
					i := strings.IndexByte(string(buf), '\n')
					if i < 0 {
						break
					}
					lines <- string(buf[:i])
					buf = buf[i+1:]
				}
				if err != nil {
					close(lines)
					return
				}
			}
		}()
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				record(t, acked, l)
				if deadline == nil {
					deadline = time.After(delay)
				}
			case <-startup:
				if deadline == nil {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("round %d: the writer acknowledged nothing in 30 s", round)
				}
			case <-deadline:
				cmd.Process.Kill()
				for l := range lines { // acks already written before the kill still count
					record(t, acked, l)
				}
				break read
			}
		}
		cmd.Wait()
	}
	if len(acked) == 0 {
		t.Fatal("writer acknowledged nothing; the test proved nothing")
	}
	db := open(t, path)
	defer db.Close()
	all, err := db.Journal(JournalQuery{})
	if err != nil {
		t.Fatalf("journal unreadable after crashes: %v", err)
	}
	got := map[uint64]string{}
	for _, e := range all {
		got[e.Seq] = e.Target
	}
	for seq, target := range acked {
		if got[seq] != target {
			t.Errorf("acknowledged entry %d (%s) lost or changed: got %q", seq, target, got[seq])
		}
	}
	t.Logf("%d rounds, %d acknowledged entries intact, %d total", rounds, len(acked), len(all))
}

func record(t *testing.T, acked map[uint64]string, line string) {
	seq, target, ok := strings.Cut(line, " ")
	if !ok {
		return
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		t.Fatalf("bad ack %q", line)
	}
	acked[n] = target
}

// TestHelperAppendForever is not a test: the crash test runs it in a child and kills it.
func TestHelperAppendForever(t *testing.T) {
	path := os.Getenv("RK_APPEND")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := Open(path)
	if err != nil {
		os.Exit(3)
	}
	round := os.Getenv("RK_ROUND")
	for i := 0; ; i++ {
		target := "docker:x/r" + round + "-" + strconv.Itoa(i)
		e, err := db.Append(Entry{Action: "snapshot", Target: target, Phase: PhaseIntent, Params: map[string]string{"pad": strings.Repeat("x", i%700)}})
		if err != nil {
			os.Exit(4)
		}
		os.Stdout.WriteString(strconv.FormatUint(e.Seq, 10) + " " + target + "\n")
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"b", "a"} {
		if err := db.PutSnapshot(SnapshotRecord{Info: sandbox.SnapshotInfo{ID: id, SandboxID: "docker:x/p", Created: t0.Add(time.Duration(i) * time.Hour)}, Data: json.RawMessage(`{"k":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutSnapshot(SnapshotRecord{Info: sandbox.SnapshotInfo{ID: "z", SandboxID: "docker:x/other"}}); err != nil {
		t.Fatal(err)
	}
	snaps, err := db.Snapshots("docker:x/p")
	if err != nil || len(snaps) != 2 || snaps[0].Info.ID != "b" || string(snaps[0].Data) != `{"k":1}` {
		t.Fatalf("Snapshots = %+v, %v", snaps, err)
	}
	if err := db.DeleteSnapshot("docker:x/p", "b"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Snapshot("docker:x/p", "b"); ok {
		t.Error("deleted snapshot still there")
	}
	for i := 0; i < 3; i++ {
		db.PutProbe(ProbeRecord{SandboxID: "docker:x/p", Time: t0.Add(time.Duration(i) * time.Minute), Summary: strconv.Itoa(i)})
	}
	ps, _ := db.Probes("docker:x/p", 2)
	if len(ps) != 2 || ps[1].Summary != "2" {
		t.Errorf("Probes(limit 2) = %+v; want the two newest, oldest first", ps)
	}
	inv := InventoryRecord{Backend: "docker:x", Sandboxes: []sandbox.Sandbox{{ID: "docker:x/p", Name: "p"}}}
	db.SaveInventory(inv)
	got, _ := db.Inventory()
	if len(got) != 1 || got[0].Sandboxes[0].Name != "p" {
		t.Errorf("Inventory = %+v", got)
	}
}

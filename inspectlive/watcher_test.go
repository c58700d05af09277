package inspectlive_test

import (
	"context"
	"database/sql"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// A flushed sample's score comes from the zstd-compressed .eval it was flushed to.
func TestFlushedSampleScoreFromEvalLog(t *testing.T) {
	w := newWorld(t)
	pid := os.Getpid()
	db := w.buffer(pid, "ctf", "tidA")
	w.evalLog("ctf", "tidA", "openai/gpt-test")
	db.StartSample(t, "1", 1, "u1")
	db.StartSample(t, "2", 1, "u2")
	db.AddEvents(t, "1", 1, it.SandboxExec(1, "cat flag", 0, "flag{x}"))
	wt := w.watcher()
	pollN(wt, 1)
	// Without log dirs, nothing can be found: it must say so rather than guess.
	nolog := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}})
	defer nolog.Close()
	pollN(nolog, 1)

	db.CompleteSample(t, "1", 1, "u1", nil)
	w.evalLog("ctf", "tidA", "openai/gpt-test", it.EvalMember{Name: "samples/1_epoch_1.json", Body: it.EvalSample("1", 1, "u1", "C")})
	db.RemoveSample(t, "1", 1)
	db.CompleteSample(t, "2", 1, "u2", nil)
	db.RemoveSample(t, "2", 1) // flushed by the buffer, but (in this test) to a log we never see
	pollN(wt, 1)

	e := evalByTask(t, wt, "ctf")
	s, ok := wt.Sample(e.Key, "1", 1)
	if !ok || s.Status != "flushed" || s.Score != "C" || !strings.Contains(s.ScoreNote, e.LogPath) || len(s.Commands) != 1 {
		t.Fatalf("flushed sample 1: %+v", s)
	}
	s, _ = wt.Sample(e.Key, "2", 1)
	if s.Score != "" || !strings.Contains(s.ScoreNote, "score unknown") {
		t.Fatalf("flushed sample 2 without a logged score: %+v", s)
	}
	// Its member lands later: the next rescan after the log changes finds it.
	time.Sleep(10 * time.Millisecond) // a distinct mtime
	w.evalLog("ctf", "tidA", "openai/gpt-test", it.EvalMember{Name: "samples/1_epoch_1.json", Body: it.EvalSample("1", 1, "u1", "C")},
		it.EvalMember{Name: "samples/2_epoch_1.json", Body: it.EvalSample("2", 1, "u2", 0.5)})
	pollN(wt, 1)
	if s, _ = wt.Sample(e.Key, "2", 1); s.Score != "0.5" || !strings.Contains(s.ScoreNote, e.LogPath) {
		t.Fatalf("flushed sample 2 after its member landed: %+v", s)
	}

	pollN(nolog, 1)
	e2 := nolog.Evals()[0]
	if e2.LogPath != "" || e2.Task != "ctf" || !strings.Contains(e2.Samples[0].ScoreNote, "score unknown") {
		t.Fatalf("eval without a log: %+v", e2)
	}
}

func TestCommandsOutputAndAttachmentsOnDemand(t *testing.T) {
	w := newWorld(t)
	db := w.buffer(os.Getpid(), "ctf", "tidA")
	long := "for i in $(seq 1 100); do curl -s http://10.0.0.5:8080/api/v1/users/$i | jq .name; done # " + strings.Repeat("x", 40)
	db.StartSample(t, "1", 1, "u1")
	db.AddAttachment(t, "1", 1, "c0ffee", long)
	db.AddEvents(t, "1", 1, it.SandboxExec(1, "bash --login -c id", 0, "uid=0(root)"), it.ToolCall("t1", 2, "attachment://c0ffee", true, ""))
	wt := w.watcher()
	pollN(wt, 1)
	key := wt.Evals()[0].Key
	cmds := wt.Commands(key, "1", 1)
	if len(cmds) != 2 || cmds[0].Cmd != "bash --login -c id" || !cmds[1].Pending || cmds[1].Cmd != "attachment://c0ffee" {
		t.Fatalf("commands %+v", cmds)
	}
	out, ok := wt.Output(key, "1", 1, cmds[0].Seq)
	if !ok || out != "uid=0(root)" {
		t.Fatalf("output %q %v", out, ok)
	}
	got, err := wt.Resolve(context.Background(), key, "1", 1, cmds[1].Cmd)
	if err != nil || got != long {
		t.Fatalf("resolve %q %v", got, err)
	}
	if strings.Contains(it.MustJSON(wt.Evals()), "uid=0(root)") {
		t.Error("command output must only be returned on demand, never in snapshots")
	}
	if strings.Contains(it.MustJSON(wt.Evals()), "sk-secret-value") {
		t.Error("an env value of a sandbox event is in a snapshot")
	}
	if wt.Commands(key, "9", 1) != nil {
		t.Error("commands of an unknown sample")
	}
}

// A writer holding the buffer locked makes the eval stale, not broken; the next poll recovers.
func TestLockedBufferIsStaleNotFatal(t *testing.T) {
	w := newWorld(t)
	path := w.buffer(os.Getpid(), "ctf", "tidA").Path
	os.Remove(path)
	db := it.NewDB(t, path, false) // rollback journal: a writer's exclusive lock shuts readers out
	db.StartSample(t, "1", 1, "u1")
	wt := w.watcher()
	pollN(wt, 1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "BEGIN EXCLUSIVE")
	mustExec(t, conn, "UPDATE task_database SET version = version + 1")
	start := time.Now()
	pollN(wt, 1)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("poll blocked %v", d)
	}
	e := wt.Evals()[0]
	if !e.Stale || len(e.Problems) != 0 || len(e.Samples) != 1 {
		t.Fatalf("locked: %+v", e)
	}
	mustExec(t, conn, "COMMIT")
	pollN(wt, 1)
	if e := wt.Evals()[0]; e.Stale {
		t.Fatalf("not recovered: %+v", e)
	}
}

func mustExec(t *testing.T, c *sql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestChangedNotifiesAndCloseLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorld(t)
	db := w.buffer(os.Getpid(), "ctf", "tidA")
	db.StartSample(t, "1", 1, "u1")
	wt := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, Interval: 10 * time.Millisecond})
	ch := wt.Changed()
	wt.Start()
	wt.Start()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notified for a new eval")
	}
	v := wt.Version()
	ch = wt.Changed()
	select {
	case <-ch:
		t.Fatal("notified with nothing changed")
	case <-time.After(50 * time.Millisecond):
	}
	db.AddEvents(t, "1", 1, it.SandboxExec(1, "id", 0, ""))
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notified for a new event")
	}
	if wt.Version() <= v {
		t.Fatalf("version %d did not move past %d", wt.Version(), v)
	}
	wt.Close()
	wt.Close()
	db.Close() // the test's own writer
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	if len(wt.Evals()) != 1 {
		t.Error("the last snapshot should stay readable after Close")
	}
}

// Many sessions read while the poller writes; run with -race.
func TestConcurrentReaders(t *testing.T) {
	w := newWorld(t)
	pid := os.Getpid()
	db := w.buffer(pid, "ctf", "tidA")
	db.StartSample(t, "1", 1, "u1")
	w.trace(pid, it.TraceSubprocess(1, "inspect-ctf-iconc01", "ctf", 1, 1))
	wt := w.watcher()
	pollN(wt, 1)
	key := wt.Evals()[0].Key
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, e := range wt.Evals() {
					for _, s := range e.Samples {
						_ = len(s.Commands)
					}
				}
				if l := wt.Link(docker("inspect-ctf-iconc01")); l.SampleID != "1" {
					t.Errorf("link flapped: %+v", l)
					return
				}
				for _, c := range wt.Commands(key, "1", 1) {
					wt.Output(key, "1", 1, c.Seq)
				}
			}
		}()
	}
	for i := range 20 {
		db.AddEvents(t, "1", 1, it.SandboxExec(i, "echo hi", 0, "hi"))
		wt.Poll(context.Background())
	}
	close(stop)
	wg.Wait()
	if n := len(wt.Commands(key, "1", 1)); n != 20 {
		t.Fatalf("commands %d", n)
	}
}

// Ended evals stay (for orphan links) until Retain has passed.
func TestEndedEvalRetention(t *testing.T) {
	w := newWorld(t)
	db := w.buffer(os.Getpid(), "ctf", "tidA")
	db.StartSample(t, "1", 1, "u1")
	wt := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, Rescan: 1, Retain: 50 * time.Millisecond})
	defer wt.Close()
	pollN(wt, 1)
	db.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(db.Path + s)
	}
	pollN(wt, 1)
	if e := wt.Evals(); len(e) != 1 || !e[0].Ended {
		t.Fatalf("ended eval not kept: %+v", e)
	}
	time.Sleep(60 * time.Millisecond)
	pollN(wt, 1)
	if e := wt.Evals(); len(e) != 0 {
		t.Fatalf("ended eval kept past Retain: %+v", e)
	}
}

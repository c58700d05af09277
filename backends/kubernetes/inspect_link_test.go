package kubernetes

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver inspectlive's reader uses

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"github.com/rangekeeper/rangekeeper/inspectlive"
)

// A release Inspect installed for a sample carries that sample's uuid as the pod label
// inspectSampleUUID (inspect_k8s_sandbox 0.4.0+: src/k8s_sandbox/_helm.py sets
// labels.inspectSampleUUID, and the agent-env chart's templates/services.yaml puts
// .Values.labels on the pods). Listed by the real backend from a real API server, the sandbox
// links exactly to the buffer sample of that uuid, as Inspect 0.3.260 (inspect_ai at 499e6152)
// writes its buffer: src/inspect_ai/log/_recorders/buffer/database.py. A release whose uuid no
// buffer holds, and one whose pods carry no uuid (as with a custom chart without .Values.labels,
// or inspect_k8s_sandbox before 0.4.0), stay unlinked, each saying why.
func TestClusterReleaseLinksExactlyToTheBufferSampleOfItsUUID(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	const uuid = "e7Hq2Lk9Pz4Vw8Xn3Rt6Ys" // Inspect's sample uuids are shortuuids
	linked := release{name: newReleaseName(), task: "ctf_k8s", sample: uuid}
	elsewhere := release{name: newReleaseName(), task: "ctf_k8s", sample: "Zz9Yy8Xx7Ww6Vv5Uu4Tt3S"}
	unlabelled := release{name: newReleaseName(), task: "ctf_k8s"} // the label empty: no uuid to link by
	for _, r := range []release{linked, elsewhere, unlabelled} {
		install(t, b, ns, r)
	}
	f := newFleet()
	watch(t, b, f)
	id := func(r release) string { return "k8s:envtest/" + ns + "/" + r.name }
	f.wait(t, 90*time.Second, "three releases with running members", func(m map[string]backends.Sandbox) bool {
		return allRunning(m[id(linked)], 1) && allRunning(m[id(elsewhere)], 1) && allRunning(m[id(unlabelled)], 1)
	})

	data := t.TempDir()
	db := inspectBuffer(t, data, os.Getpid(), "ctf_k8s")
	for _, s := range []struct {
		id, uuid string
		epoch    int
	}{{"7", "a1b2c3d4e5f6g7h8i9j0k1", 1}, {"7", uuid, 2}} {
		row, _ := json.Marshal(map[string]any{"id": s.id, "epoch": s.epoch, "uuid": s.uuid, "input": "x", "target": "flag",
			"completed": false, "scores": nil, "started_at": "2026-08-22T10:00:00Z"})
		if _, err := db.Exec(`INSERT INTO samples (id, epoch, data) VALUES (?, ?, ?)`, s.id, s.epoch, string(row)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`UPDATE task_database SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	w := inspectlive.New(inspectlive.Config{DataDirs: []string{data}})
	defer w.Close()
	w.Poll(context.Background())

	sb, _ := f.get(id(linked))
	l := w.Link(sb)
	if l.How != inspectlive.HowExact || l.SampleID != "7" || l.Epoch != 2 || l.UUID != uuid || l.Eval.Task != "ctf_k8s" ||
		l.Eval.PID != os.Getpid() || l.Status != inspectlive.StatusRunning || l.Orphaned {
		t.Errorf("link of the labelled release = %+v", l)
	}
	sb, _ = f.get(id(elsewhere))
	if l := w.Link(sb); l.How != inspectlive.HowUnknown || l.Linked() || !strings.Contains(l.Why, "in no sample buffer") {
		t.Errorf("link of a release whose uuid no buffer holds = %+v", l)
	}
	sb, _ = f.get(id(unlabelled))
	if l := w.Link(sb); l.How != inspectlive.HowUnknown || !strings.Contains(l.Why, "inspectSampleUUID") {
		t.Errorf("link of a release without the label = %+v", l)
	}
}

// inspectBuffer creates one eval's sample buffer with Inspect 0.3.260's schema
// (SampleBufferDatabase.SCHEMA; inspectlive's own writers are internal to it) in WAL mode.
func inspectBuffer(t *testing.T, data string, pid int, task string) *sql.DB {
	t.Helper()
	path := filepath.Join(data, "samplebuffer", "5f2b0c", fmt.Sprintf("2026-08-22T10-00-00+00-00_%s_Zx8Kq2LmTd4Rw.eval.%d.db", task, pid))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`
CREATE TABLE IF NOT EXISTS task_database (version INTEGER PRIMARY KEY DEFAULT 1, metrics TEXT DEFAULT '[]', last_updated DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE samples (id TEXT, epoch INTEGER, data TEXT, sample_metadata TEXT, sample_metadata_hash TEXT, PRIMARY KEY (id, epoch));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, sample_id TEXT, sample_epoch INTEGER, data TEXT);
CREATE TABLE attachments (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT, content TEXT, UNIQUE (sample_id, sample_epoch, hash));
CREATE TABLE message_pool (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, msg_id TEXT, data TEXT);
CREATE TABLE call_pool (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS idx_events_sample ON events(sample_id, sample_epoch);
CREATE INDEX IF NOT EXISTS idx_attachments_hash ON attachments(hash);
INSERT INTO task_database (version) VALUES (1);`); err != nil {
		t.Fatalf("buffer %s: %v", path, err)
	}
	return db
}

package trace_test

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	"github.com/rangekeeper/rangekeeper/inspectlive/trace"
)

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestRetriedSampleAndPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace-4242.log")
	first := it.TraceSubprocess(1, "inspect-ctf-iaaaaaa", "ctf", 7, 1)
	retry := it.TraceSubprocess(50, "inspect-ctf-ibbbbbb", "ctf", 7, 1)
	other := it.TraceSubprocess(2, "inspect-ctf-icccccc", "ctf", "web-3", 2)
	appendFile(t, path, it.TraceOther(0)+first+other+retry[:len(retry)/2])
	r := trace.Open(path)
	if changed, err := r.Poll(); err != nil || !changed {
		t.Fatalf("poll %v %v", changed, err)
	}
	if p, ok := r.Lookup("inspect-ctf-iaaaaaa"); !ok || p.SampleID != "7" || p.Epoch != 1 || p.Task != "ctf" {
		t.Fatalf("int sample id: %+v %v", p, ok)
	}
	if p, ok := r.Lookup("inspect-ctf-icccccc"); !ok || p.SampleID != "web-3" || p.Epoch != 2 {
		t.Fatalf("string sample id: %+v %v", p, ok)
	}
	if _, ok := r.Lookup("inspect-ctf-ibbbbbb"); ok {
		t.Fatal("a partial last line was read")
	}
	appendFile(t, path, retry[len(retry)/2:])
	r.Poll()
	p, ok := r.Latest("7", 1)
	if !ok || p.Project != "inspect-ctf-ibbbbbb" {
		t.Fatalf("latest attempt of the retried sample: %+v", p)
	}
	if changed, _ := r.Poll(); changed {
		t.Fatal("an unchanged file reported a change")
	}
}

func TestTruncatedAndGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace-1.log")
	appendFile(t, path, it.TraceOther(0)+it.TraceOther(1)+it.TraceSubprocess(2, "inspect-a-i111111", "a", 1, 1))
	r := trace.Open(path)
	r.Poll()
	os.WriteFile(path, []byte(it.TraceSubprocess(3, "inspect-b-i222222", "b", 2, 1)), 0o644) // rotated/truncated
	r.Poll()
	if _, ok := r.Lookup("inspect-b-i222222"); !ok {
		t.Fatal("a truncated file was not reread from the start")
	}
	if _, ok := r.Lookup("inspect-a-i111111"); !ok {
		t.Fatal("projects known before the truncation were dropped")
	}
	os.Remove(path)
	if changed, err := r.Poll(); changed || err != nil || !r.Gone() {
		t.Fatalf("gone file: %v %v %v", changed, err, r.Gone())
	}
}

// A process that exits cleanly gzips its trace; it is read whole, once.
func TestGzipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace-3.log.gz")
	f, _ := os.Create(path)
	zw := gzip.NewWriter(f)
	zw.Write([]byte(it.TraceOther(0) + it.TraceSubprocess(1, "inspect-ctf-igz0001", "ctf", 4, 2)))
	zw.Close()
	f.Close()
	r := trace.Open(path)
	if changed, err := r.Poll(); !changed || err != nil {
		t.Fatalf("%v %v", changed, err)
	}
	if p, ok := r.Lookup("inspect-ctf-igz0001"); !ok || p.SampleID != "4" || p.Epoch != 2 {
		t.Fatalf("%+v %v", p, ok)
	}
	if changed, _ := r.Poll(); changed {
		t.Fatal("an unchanged gzipped trace was read again")
	}
}

func TestIgnoresRecordsOutsideSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace-2.log")
	// task_init's project (config/build/pull) is traced with no sample context.
	line := `{"timestamp":"2026-08-22T10:00:00+00:00","level":"TRACE","message":"Subprocess: docker compose --project-name inspect-ctf-iinit00 build (enter)","action":"Subprocess","detail":"docker compose --project-name inspect-ctf-iinit00 build","event":"enter","trace_id":"x"}` + "\n"
	appendFile(t, path, line+"{not json\n")
	r := trace.Open(path)
	if changed, err := r.Poll(); changed || err != nil {
		t.Fatalf("%v %v", changed, err)
	}
}

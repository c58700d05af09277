package state

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// A sandbox's timeline merges recorded activity, the journal, probe results and rangekeeper's
// recording sessions in time order, shows the gap while rangekeeper was not running, survives
// reopening the file, keeps no secret, and is bounded by age and count.
func TestTimelineMergesSourcesGapsAndRetention(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	const id = "docker:default/inspect-x-iabcdef"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.RecordSession(Session{Start: at(0), Last: at(10)})) // killed: no clean stop
	must(db.RecordActivity([]sandbox.Activity{
		{Time: at(2), SandboxID: id, Member: "default", Kind: sandbox.ActOOM},
		{Time: at(1), SandboxID: id, Member: "default", Kind: sandbox.ActExec, Actor: "root", Detail: "sh token=sk-live-0123456789abcdefghijkl"},
		{Time: at(3), SandboxID: "docker:default/other-iffffff", Kind: sandbox.ActStart},
	}))
	_, err = db.Append(Entry{Time: at(4), Operator: "op@host", Action: "snapshot", Target: id, Phase: PhaseIntent})
	must(err)
	must(db.PutProbe(ProbeRecord{SandboxID: id, Time: at(5), Summary: "held", Report: []byte("{}")}))
	must(db.Close())

	db, err = Open(path)
	must(err)
	defer db.Close()
	must(db.RecordSession(Session{Start: at(20), Last: at(30), Clean: true}))
	must(db.RecordActivity([]sandbox.Activity{{Time: at(21), SandboxID: id, Member: "web", Kind: sandbox.ActNetConnect, Attrs: map[string]string{"network": "egress"}}}))

	es, err := db.Timeline(TimelineQuery{SandboxID: id})
	must(err)
	var got []string
	for _, e := range es {
		got = append(got, e.Source+":"+e.Kind)
		if strings.Contains(e.Detail, "sk-live") {
			t.Errorf("a secret reached the timeline: %q", e.Detail)
		}
	}
	want := "rangekeeper:recording-start backend:exec backend:oom journal:snapshot probe:probe rangekeeper:gap rangekeeper:recording-start backend:network-connect rangekeeper:recording-stop"
	if strings.Join(got, " ") != want {
		t.Errorf("timeline:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if gap := es[5]; !gap.Time.Equal(at(10)) || !strings.Contains(gap.Detail, "10m0s") || !strings.Contains(gap.Detail, "not stopped cleanly") {
		t.Errorf("gap entry: %+v", gap)
	}

	for i := range 30 {
		must(db.RecordActivity([]sandbox.Activity{{Time: at(40).Add(time.Duration(i) * time.Second), SandboxID: id, Kind: sandbox.ActHealth}}))
	}
	removed, err := db.PruneTimeline(Retention{MaxAge: 50 * time.Minute, MaxEntries: 10}, base.Add(time.Hour))
	must(err)
	es, err = db.Timeline(TimelineQuery{SandboxID: id})
	must(err)
	backend := 0
	for _, e := range es {
		if e.Source == SourceBackend {
			backend++
			if e.Time.Before(at(10)) {
				t.Errorf("entry older than MaxAge kept: %+v", e)
			}
		}
	}
	if backend != 10 || removed < 23 {
		t.Errorf("after pruning: %d backend entries (want 10), %d removed", backend, removed)
	}
	if other, _ := db.Timeline(TimelineQuery{SandboxID: "docker:default/other-iffffff"}); len(other) != 0 && other[0].Source == SourceBackend {
		t.Errorf("the other sandbox's old entry survived MaxAge: %+v", other)
	}
}

package timeline

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// listed is a backend that lists its sandboxes, then emits what the test sends.
type listed struct {
	list   []backends.Sandbox
	events chan backends.Event
}

func (l *listed) Name() string        { return "k8s:test" }
func (l *listed) Kind() backends.Kind { return backends.KindKubernetes }
func (l *listed) Watch(ctx context.Context, emit func(backends.Event)) error {
	emit(backends.Event{Type: backends.EventReset, Sandboxes: l.list})
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-l.events:
			emit(ev)
		}
	}
}

func sb(i int, pending bool) backends.Sandbox {
	s := backends.Sandbox{ID: fmt.Sprintf("k8s:test/ns/r%05d", i), Actionable: true, Status: backends.StatusRunning,
		Findings: []sandbox.Finding{{RuleID: "K8S-H06", Severity: catalog.SeverityMedium, Member: "default"}}}
	if pending {
		s.PosturePending = "network posture: policies still loading"
	}
	return s
}

func postureRig(tb testing.TB, list []backends.Sandbox) (*listed, *supervisor.Supervisor, *state.DB) {
	tb.Helper()
	l := &listed{list: list, events: make(chan backends.Event, 1)}
	sup := supervisor.New([]backends.Backend{l}, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	tb.Cleanup(func() { cancel(); wait() })
	sup.WaitReady(ctx)
	db, err := state.Open(filepath.Join(tb.TempDir(), "state.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return l, sup, db
}

func postureEntries(t *testing.T, db *state.DB, id string) int {
	t.Helper()
	es, err := db.Timeline(state.TimelineQuery{SandboxID: id})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Source == state.SourcePosture {
			n++
		}
	}
	return n
}

// A sandbox's first posture and each change of it are recorded once; a pending posture is
// neither; an unchanged fleet records nothing.
func TestPostureRecordedOnceAndNotWhilePending(t *testing.T) {
	l, sup, db := postureRig(t, []backends.Sandbox{sb(0, false), sb(1, true)})
	r := &Recorder{Sup: sup, DB: db}
	for range 2 {
		if err := r.CheckPosture(); err != nil {
			t.Fatal(err)
		}
	}
	if n0, n1 := postureEntries(t, db, sb(0, false).ID), postureEntries(t, db, sb(1, true).ID); n0 != 1 || n1 != 0 {
		t.Fatalf("posture entries %d and %d, want 1 (first posture, then unchanged) and 0 (pending)", n0, n1)
	}
	v := sup.Version("k8s:test")
	l.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sb(1, false)}
	for deadline := time.Now().Add(5 * time.Second); sup.Version("k8s:test") == v; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upsert was never applied")
		}
	}
	if err := r.CheckPosture(); err != nil {
		t.Fatal(err)
	}
	if n := postureEntries(t, db, sb(1, false).ID); n != 1 {
		t.Fatalf("%d posture entries once complete, want 1", n)
	}
}

// BenchmarkFirstPostureCheck2500 is the first posture check of a 2,500-sandbox fleet (the
// 5,000-pod bench-fleet range): every sandbox gets its first entry, in one transaction.
func BenchmarkFirstPostureCheck2500(b *testing.B) {
	var list []backends.Sandbox
	for i := range 2500 {
		list = append(list, sb(i, false))
	}
	_, sup, db := postureRig(b, list)
	b.ResetTimer()
	for range b.N {
		r := &Recorder{Sup: sup, DB: db}
		if err := r.CheckPosture(); err != nil {
			b.Fatal(err)
		}
	}
}

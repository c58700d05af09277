package fleet

import (
	"reflect"
	"slices"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// cachedFleets are two backends' caches, neither in the table's order.
func cachedFleets() []CachedFleet {
	var a, b []backends.Sandbox
	for i := 9; i >= 0; i-- {
		a = append(a, sb("docker:a", i))
		b = append(b, sb("docker:b", 20+i))
	}
	return []CachedFleet{{Backend: "docker:b", Sandboxes: b}, {Backend: "docker:a", Sandboxes: a}}
}

func shownIDs(m *Model) []string {
	var ids []string
	for i := range m.store.Len() {
		ids = append(ids, m.store.At(i).SB.ID)
	}
	return ids
}

// The prepared road (rows built and sorted off the UI goroutine, installed as they are) shows
// what LoadCached shows, whatever happened between preparing and loading.
func TestLoadPreparedShowsWhatLoadCachedShows(t *testing.T) {
	for _, c := range []struct {
		name   string
		before func(m *Model) // what the operator did while the cache was read
	}{
		{"a start", func(*Model) {}},
		{"a filter typed", func(m *Model) { m.SetFilter("ctf") }},
		{"sorted by age", func(m *Model) {
			m.store.Install(Compute(m.store.Snapshot(m.store.Query(), Order{Col: ColAge, Desc: true})))
		}},
		{"a backend answered", func(m *Model) {
			m.store.Put(NewRow("docker:a", sb("docker:a", 99), false))
			m.SetHealthAll([]supervisor.Health{{Backend: "docker:a", State: supervisor.StateConnected}})
		}},
		{"a filter still computing", func(m *Model) { _ = m.compute(m.store.Query(), m.store.Order()) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fast, slow := New(keymap.Default(), theme.Dark256()), New(keymap.Default(), theme.Dark256())
			prepared := PrepareCache(cachedFleets(), fast.store.Order())
			c.before(&fast)
			c.before(&slow)
			fast.LoadPrepared(prepared)
			for _, f := range cachedFleets() {
				rows := make([]*Row, len(f.Sandboxes))
				for i := range rows {
					rows[i] = f.row(i)
				}
				slow.LoadCached(f.Backend, rows)
			}
			if got, want := shownIDs(&fast), shownIDs(&slow); !slices.Equal(got, want) {
				t.Fatalf("prepared cache shows\n%v\nLoadCached shows\n%v", got, want)
			}
			if fast.store.Total() != slow.store.Total() || !reflect.DeepEqual(fast.stale, slow.stale) {
				t.Fatalf("%d rows, stale %v; LoadCached: %d rows, stale %v", fast.store.Total(), fast.stale, slow.store.Total(), slow.stale)
			}
			for i := 1; i < fast.store.Len(); i++ {
				if fast.store.Order().Compare(fast.store.At(i-1), fast.store.At(i)) > 0 {
					t.Fatalf("row %d is out of order", i)
				}
			}
		})
	}
}

func TestLoadPreparedWithOneIDTwiceKeepsOneRow(t *testing.T) {
	m := New(keymap.Default(), theme.Dark256())
	dup := []backends.Sandbox{sb("docker:a", 1), sb("docker:a", 2), sb("docker:a", 1)}
	m.LoadPrepared(PrepareCache([]CachedFleet{{Backend: "docker:a", Sandboxes: dup}}, m.store.Order()))
	if m.store.Len() != 2 || m.store.Total() != 2 {
		t.Fatalf("%d shown of %d, want 2 of 2", m.store.Len(), m.store.Total())
	}
}

// A cache whose findings stay encoded shows each row's worst severity and hands the detail the
// findings, read when asked.
func TestCachedRowsReadTheirFindingsWhenAsked(t *testing.T) {
	reads := 0
	findings := []backends.Finding{{RuleID: "K8S-H01", Severity: catalog.SeverityCritical, Member: "pod"}}
	f := CachedFleet{Backend: "k8s:x", Sandboxes: []backends.Sandbox{sb("k8s:x", 1), sb("k8s:x", 2)},
		Worst: func(i int) catalog.Severity {
			return []catalog.Severity{catalog.SeverityCritical, catalog.SeverityNone}[i]
		},
		Findings: func(i int) []backends.Finding {
			reads++
			if i == 0 {
				return findings
			}
			return nil
		}}
	m := New(keymap.Default(), theme.Dark256())
	m.LoadPrepared(PrepareCache([]CachedFleet{f}, m.store.Order()))
	if reads != 0 {
		t.Fatalf("findings read %d times while loading", reads)
	}
	r, ok := m.store.Get(f.Sandboxes[0].ID)
	if !ok || r.Sev != catalog.SeverityCritical || r.SB.Findings != nil {
		t.Fatalf("row %v: severity %v, findings held %v", ok, r.Sev, r.SB.Findings)
	}
	if got := r.Sandbox().Findings; !reflect.DeepEqual(got, findings) || reads != 1 {
		t.Fatalf("Sandbox().Findings = %v after %d reads", got, reads)
	}
	if r2, _ := m.store.Get(f.Sandboxes[1].ID); r2.Sev != catalog.SeverityNone || r2.Sandbox().Findings != nil {
		t.Fatalf("a sandbox without findings: severity %v, findings %v", r2.Sev, r2.Sandbox().Findings)
	}
}

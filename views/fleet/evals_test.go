package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// linkedFleet is six sandboxes, five of them linked with every certainty and one orphaned.
func linkedFleet(t testing.TB, w, h int) Model {
	m := New(keymap.Default(), theme.Plain())
	m.Now = func() time.Time { return t0 }
	for i := range 6 {
		m.store.Put(NewRow("docker:a", sb("docker:a", i), false))
	}
	m.SetSize(w, h)
	setLinks(&m, testLinks())
	return m
}

func testLinks() map[string]*EvalLink {
	id := func(i int) string { return sb("docker:a", i).ID }
	return map[string]*EvalLink{
		id(0): {Task: "cybench", SampleID: "42", Epoch: 1, How: "exact", Why: "pod label inspectSampleUUID=u42"},
		id(1): {Task: "cybench", SampleID: "7", Epoch: 2, How: "trace", Why: "trace names project"},
		id(2): {Task: "intercode_ctf", SampleID: "10", Epoch: 1, How: "matched"},
		id(3): {Task: "intercode_ctf", How: "guessed", Why: "task prefix only"},
		id(4): {Task: "cybench", SampleID: "2", Epoch: 1, How: "exact", Orphaned: true},
	}
}

// The EVAL and SAMPLE columns at three widths: both at 120 and 100, neither at 80 (the name
// keeps its room), with the certainty marks and ORPHAN.
func TestLinkColumnsGolden(t *testing.T) {
	for _, w := range []int{120, 100, 80} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			m := linkedFleet(t, w, 12)
			out := m.View()
			goldentest.Assert(t, fmt.Sprintf("linked-%dx12", w), out)
			header := strings.Split(out, "\n")[2]
			if shown := strings.Contains(header, "SAMPLE"); shown != (w >= 100) {
				t.Errorf("SAMPLE shown=%v at width %d:\n%s", shown, w, out)
			}
			if orphan := map[int]string{120: "ORPHAN =2/1", 100: "ORPH =2/1"}[w]; orphan != "" && !strings.Contains(out, orphan) {
				t.Errorf("the orphaned sandbox is not marked:\n%s", out)
			}
		})
	}
}

// A fleet with no link keeps the table it always had: no empty columns.
func TestNoLinksNoColumns(t *testing.T) {
	m := fleetOf(5)
	if strings.Contains(m.View(), "SAMPLE") {
		t.Fatal("link columns shown with no link")
	}
	setLinks(&m, map[string]*EvalLink{})
	if strings.Contains(m.View(), "EVAL") {
		t.Fatal("link columns shown with an empty link set")
	}
}

func filtered(t *testing.T, m *Model, f string) []string {
	t.Helper()
	cmd := m.SetFilter(f)
	if m.filterErr != "" {
		t.Fatalf("filter %q: %s", f, m.filterErr)
	}
	*m, _ = m.Update(cmd())
	var out []string
	for i := 0; i < m.store.Len(); i++ {
		r := m.store.At(i)
		s := "-"
		if r.Eval != nil {
			s = r.Eval.Cell()
		}
		out = append(out, s)
	}
	return out
}

func TestLinkFilters(t *testing.T) {
	m := linkedFleet(t, 120, 20)
	for _, tc := range []struct {
		filter string
		want   string
	}{
		{"sample=42", "=42/1"},
		{"sample=7/2", "~7/2"},
		{"sample~1", "~10/1 =42/1 ORPHAN =2/1"}, // 10/1, 42/1 and 2/1 all contain a 1
		{"eval~cyb", "=42/1 ~7/2 ORPHAN =2/1"},
		{"eval=intercode_ctf", "~10/1 ?"},
		{"eval!=cybench sample!=10", "? -"},
		{"orphaned", "ORPHAN =2/1"},
		{"link=orphaned", "ORPHAN =2/1"},
		{"link=exact", "=42/1 ORPHAN =2/1"},
		{"link!=guessed", "=42/1 ~7/2 ~10/1 ORPHAN =2/1 -"}, // an unlinked row has no link: != holds
		{"link=trace", "~7/2"},
		{"cybench", "=42/1 ~7/2 ORPHAN =2/1"},
	} {
		got := strings.Join(filtered(t, &m, tc.filter), " ")
		// the order is the store's (backend then name): compare as sets of cells
		if !sameWords(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.filter, got, tc.want)
		}
	}
	if _, err := ParseQuery("evals=x"); err == nil || !strings.Contains(err.Error(), "eval,") {
		t.Errorf("an unknown field's error should list eval: %v", err)
	}
}

func sameWords(a, b string) bool {
	count := map[string]int{}
	for _, w := range strings.Fields(a) {
		count[w]++
	}
	for _, w := range strings.Fields(b) {
		count[w]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// Sorting by SAMPLE orders by task, then the id as a number, then epoch; unlinked rows last.
// The sort key cycles through EVAL and SAMPLE like every column.
func TestLinkSort(t *testing.T) {
	m := linkedFleet(t, 120, 20)
	for range ColSample { // the sort key, pressed from BACKEND until SAMPLE
		var cmd tea.Cmd
		m, cmd = m.Update(keyOf(m.Keys, keymap.Sort))
		m, _ = m.Update(cmd())
	}
	if m.store.Order().Col != ColSample {
		t.Fatalf("the cycle reached %s", m.store.Order().Col)
	}
	got := strings.Join(filtered(t, &m, ""), " ")
	if want := "ORPHAN =2/1 ~7/2 =42/1 ? ~10/1 -"; got != want {
		t.Errorf("by sample: %q, want %q", got, want)
	}
	if !strings.Contains(m.View(), "SAMPLE^") {
		t.Errorf("the header does not show the sort column:\n%s", m.View())
	}
	m, cmd := m.Update(keyOf(m.Keys, keymap.Sort)) // SAMPLE → STATUS: the cycle goes on
	m, _ = m.Update(cmd())
	if m.store.Order().Col != ColStatus {
		t.Errorf("after SAMPLE the cycle went to %s", m.store.Order().Col)
	}
	o := m.store.Order()
	o.Col = ColEval
	m.store.Install(Compute(m.store.Snapshot(m.store.Query(), o)))
	// cybench first, intercode_ctf next (ties by sandbox ID), unlinked last
	if got, want := strings.Join(filtered(t, &m, ""), " "), "=42/1 ORPHAN =2/1 ~7/2 ? ~10/1 -"; got != want {
		t.Errorf("by eval: %q, want %q", got, want)
	}
}

func keyOf(km *keymap.Map, n keymap.Name) tea.KeyPressMsg {
	b, _ := km.Get(n)
	k := b.Keys[0]
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// A refresh replaces only the rows whose link changed; rows entering later (an upsert, a reset)
// take the installed link; the status line gives the selected row's evidence.
func TestLinksFollowRowsAndRefreshes(t *testing.T) {
	m := linkedFleet(t, 120, 20)
	before := map[string]*Row{}
	for i := 0; i < m.store.Len(); i++ {
		r := m.store.At(i)
		before[r.SB.ID] = r
	}
	links := testLinks()
	moved := sb("docker:a", 1).ID
	links[moved] = &EvalLink{Task: "cybench", SampleID: "8", Epoch: 1, How: "exact"}
	if u := PrepareLinks(m.Rows(), links); u.Changed() != 1 {
		t.Fatalf("%d rows rebuilt for one changed link", u.Changed())
	}
	setLinks(&m, links)
	for id, r := range before {
		now, _ := m.store.Get(id)
		if (now != r) != (id == moved) {
			t.Errorf("%s replaced=%v", id, now != r)
		}
	}
	m.store.Put(NewRow("docker:a", sb("docker:a", 0), false)) // the backend's update
	if r, _ := m.store.Get(sb("docker:a", 0).ID); r.Eval == nil || r.Eval.SampleID != "42" {
		t.Fatalf("an updated row lost its link: %+v", r.Eval)
	}
	m.Select(sb("docker:a", 0).ID)
	if !strings.Contains(m.View(), "= exact cybench sample 42/1: pod label inspectSampleUUID=u42") {
		t.Errorf("the status line lacks the link's evidence:\n%s", m.View())
	}
}

// BenchmarkRenderLinked is BenchmarkRender with every row linked (the EVAL and SAMPLE columns
// shown): a frame must cost what it did without links.
func BenchmarkRenderLinked(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("sandboxes=%d", n), func(b *testing.B) {
			m := fleetOf(n)
			links := make(map[string]*EvalLink, n)
			for i := range n {
				links[sb("docker:a", i).ID] = &EvalLink{Task: "cybench", SampleID: fmt.Sprint(i), Epoch: 1, How: "trace", Orphaned: i%7 == 0}
			}
			setLinks(&m, links)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.lines = nil
				_ = m.render()
			}
		})
	}
}

// BenchmarkApplyLinks is installing a refresh in which every one of 10,000 links changed (the
// first refresh): the cost on the UI goroutine of the link columns.
func BenchmarkApplyLinks(b *testing.B) {
	m := fleetOf(10_000)
	sets := [2]map[string]*EvalLink{{}, {}}
	for i := range 10_000 {
		id := sb("docker:a", i).ID
		sets[0][id] = &EvalLink{Task: "cybench", SampleID: fmt.Sprint(i), Epoch: 1, How: "exact"}
		sets[1][id] = &EvalLink{Task: "cybench", SampleID: fmt.Sprint(i), Epoch: 2, How: "exact"}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		u := PrepareLinks(m.Rows(), sets[i%2]) // the command's part
		b.StartTimer()
		m.ApplyLinks(u)
	}
}

// setLinks installs links as the program does: prepared, then applied, then any re-sort run.
func setLinks(m *Model, links map[string]*EvalLink) {
	if cmd := m.ApplyLinks(PrepareLinks(m.Rows(), links)); cmd != nil {
		*m, _ = m.Update(cmd())
	}
}

package fleet

import (
	"cmp"

	tea "charm.land/bubbletea/v2"
	"strconv"
	"strings"
)

// EvalLink is what the table shows of the Inspect sample a sandbox serves. The program computes
// links off the UI goroutine (tui/evals.go) and installs them with SetLinks; the fleet knows
// nothing of where they come from.
//
// The SAMPLE column is "<mark><id>/<epoch>", the mark saying how sure the link is:
//
//	=  exact: an identity the sandbox carries (pod label uuid, Proxmox VMID in the transcript)
//	~  matched or trace: Inspect's trace names the project, or a command the sandbox ran confirms it
//	?  guessed: the task from the project name only; the sample is unknown
//
// ORPHAN (ORPH where the column is narrow) before it: the eval process is gone yet the sandbox
// is still here.
type EvalLink struct {
	Task     string // the eval's task
	SampleID string // "" when the sample is unknown (a guess names only the task)
	Epoch    int
	How      string // exact, matched, trace, guessed
	Why      string // the evidence, in words (the status line of the selected row)
	Orphaned bool
}

// Mark is the one-character certainty mark of the SAMPLE column.
func (l *EvalLink) Mark() string {
	switch l.How {
	case "exact":
		return "="
	case "matched", "trace":
		return "~"
	}
	return "?"
}

// Sample is "id/epoch", or "" when the sample is unknown.
func (l *EvalLink) Sample() string {
	if l.SampleID == "" {
		return ""
	}
	return l.SampleID + "/" + strconv.Itoa(l.Epoch)
}

// Cell is the SAMPLE column's text.
func (l *EvalLink) Cell() string { return l.cell(sampleWide) }

// cell is the text for a column w wide: the orphan mark shortens before the sample is cut.
func (l *EvalLink) cell(w int) string {
	s := l.Mark() + l.Sample()
	switch {
	case !l.Orphaned:
	case w >= sampleWide:
		s = "ORPHAN " + s
	default:
		s = "ORPH " + s
	}
	return s
}

// Equal reports whether two links show the same (so an unchanged link replaces no row).
func (l *EvalLink) Equal(o *EvalLink) bool {
	if l == nil || o == nil {
		return l == o
	}
	return *l == *o
}

// withEval is a copy of r showing link l; the filter's text gains the eval and the sample.
func (r *Row) withEval(l *EvalLink) *Row {
	nr := *r
	nr.attach(l)
	return &nr
}

// attach sets a row's link before the row is shared (a fresh row entering the store). The
// link's cells are laid out here, once per link change, often off the UI goroutine: a frame
// then costs what it did without links.
func (r *Row) attach(l *EvalLink) {
	r.Eval = l
	r.search = searchText(r)
	r.cells = nil
	if l != nil {
		task := l.Task
		if task == "" {
			task = "-"
		}
		r.cells = &linkCells{evalNarrow: cell(task, evalNarrow), evalWide: cell(task, evalWide),
			sampleNarrow: cell(l.cell(sampleNarrow), sampleNarrow), sampleWide: cell(l.cell(sampleWide), sampleWide)}
	}
}

// linkCells are a linked row's EVAL and SAMPLE cells at both layouts' widths.
type linkCells struct{ evalNarrow, evalWide, sampleNarrow, sampleWide string }

func searchText(r *Row) string {
	sb := r.SB
	parts := []string{sb.Name, sb.Task, string(sb.Backend), string(sb.Status), sb.Endpoint, sb.Sample}
	if l := r.Eval; l != nil {
		parts = append(parts, l.Task, l.Sample())
		if l.Orphaned {
			parts = append(parts, "orphaned")
		}
	}
	return strings.ToLower(strings.Join(parts, "\x00"))
}

// sampleValues are what sample= and sample~ compare with: the linked sample's id, its id/epoch,
// and the backend's own sample hint.
func (r *Row) sampleValues() []string {
	var vs []string
	if l := r.Eval; l != nil && l.SampleID != "" {
		vs = append(vs, l.SampleID, l.Sample())
	}
	if r.SB.Sample != "" {
		vs = append(vs, r.SB.Sample)
	}
	return vs
}

// linkValues are what link= compares with: how sure the link is, and orphaned.
func (r *Row) linkValues() []string {
	l := r.Eval
	if l == nil {
		return nil
	}
	if l.Orphaned {
		return []string{l.How, "orphaned"}
	}
	return []string{l.How}
}

// compareEval orders by the eval's task, unlinked rows last.
func compareEval(a, b *Row) int {
	if c := cmpLinked(a, b); c != 0 {
		return c
	}
	if a.Eval == nil {
		return 0
	}
	return strings.Compare(a.Eval.Task, b.Eval.Task)
}

// compareSample orders by task, then sample id (numeric ids as numbers: 2 before 10), then epoch.
func compareSample(a, b *Row) int {
	if c := cmpLinked(a, b); c != 0 {
		return c
	}
	if a.Eval == nil {
		return 0
	}
	if c := strings.Compare(a.Eval.Task, b.Eval.Task); c != 0 {
		return c
	}
	if c := compareID(a.Eval.SampleID, b.Eval.SampleID); c != 0 {
		return c
	}
	return cmp.Compare(a.Eval.Epoch, b.Eval.Epoch)
}

func cmpLinked(a, b *Row) int {
	switch {
	case a.Eval == nil && b.Eval == nil:
		return 0
	case a.Eval == nil:
		return 1
	case b.Eval == nil:
		return -1
	}
	return 0
}

func compareID(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// LinkUpdate is a refresh of every sandbox's link, made off the UI goroutine by PrepareLinks:
// the rows whose link changed come already rebuilt, so installing it costs the UI goroutine a
// map lookup per changed row and one pass over the index, not a row built and re-sorted each.
type LinkUpdate struct {
	Links map[string]*EvalLink // sandbox ID → link; absent: none
	rows  map[string][2]*Row   // ID → {the row linked, that row with its new link}
}

// Changed is how many rows the update rebuilt.
func (u LinkUpdate) Changed() int { return len(u.rows) }

// PrepareLinks compares links with the rows' own and rebuilds the rows that differ. It is pure
// and safe to run on any goroutine (rows are immutable).
func PrepareLinks(rows []*Row, links map[string]*EvalLink) LinkUpdate {
	u := LinkUpdate{Links: links, rows: map[string][2]*Row{}}
	for _, r := range rows {
		if l := links[r.SB.ID]; !r.Eval.Equal(l) {
			u.rows[r.SB.ID] = [2]*Row{r, r.withEval(l)}
		}
	}
	return u
}

// ApplyLinks installs a prepared refresh. Rows keep their place unless the link decides it
// (sorting by EVAL or SAMPLE, a filter on them); many such moves are re-sorted in a command.
func (m *Model) ApplyLinks(u LinkUpdate) tea.Cmd {
	need := m.store.applyLinks(u)
	m.followCursor()
	if need {
		return m.compute(m.store.Query(), m.store.Order())
	}
	return nil
}

// Rows are every row, in no order, for a computation off the UI goroutine (rows are immutable).
func (m *Model) Rows() []*Row { return m.store.Snapshot(Query{}, Order{}).Rows }

func (s *Store) applyLinks(u LinkUpdate) (needCompute bool) {
	s.links, s.anyLinks = u.Links, len(u.Links) > 0
	inPlace := map[string]*Row{}
	var moved []string
	for id, pair := range u.rows {
		cur := s.rows[pair[0].Backend][id]
		if cur == nil {
			var ok bool
			if cur, ok = s.Get(id); !ok {
				continue // gone since
			}
		}
		nr := pair[1]
		if cur != pair[0] { // the backend updated it since: link the newer row
			if cur.Eval.Equal(u.Links[id]) {
				continue
			}
			nr = cur.withEval(u.Links[id])
		}
		s.backendRows(cur.Backend)[id] = nr
		s.touch(id)
		if s.order.Compare(nr, cur) == 0 && s.query.Match(nr) == s.query.Match(cur) {
			inPlace[id] = nr
		} else {
			moved = append(moved, id)
		}
	}
	if len(inPlace) > 0 {
		for i, r := range s.index {
			// After a large reset the index may hold an older row still: its place waits for
			// the pending Compute.
			if nr := inPlace[r.SB.ID]; nr != nil && s.order.Compare(nr, r) == 0 {
				s.index[i] = nr
				s.indexed[r.SB.ID] = nr
			}
		}
	}
	if len(moved) > incrementalResetLimit {
		s.gdirty = true
		return true
	}
	s.reindex(moved)
	return false
}

// linkFresh gives a row entering the store the link installed for its sandbox.
func (s *Store) linkFresh(r *Row) {
	if l := s.links[r.SB.ID]; !r.Eval.Equal(l) {
		r.attach(l)
	}
}

// appendLinkCells adds the EVAL and SAMPLE cells the layout shows ("-" for an unlinked row).
func appendLinkCells(cols []string, r *Row, lay layout) []string {
	c := r.cells
	if c == nil && r.Eval != nil { // a row linked by hand rather than through attach
		nr := *r
		nr.attach(r.Eval)
		c = nr.cells
	}
	if lay.eval > 0 {
		switch {
		case c == nil:
			cols = append(cols, cell("-", lay.eval))
		case lay.eval == evalWide:
			cols = append(cols, c.evalWide)
		default:
			cols = append(cols, c.evalNarrow)
		}
	}
	if lay.sample > 0 {
		switch {
		case c == nil:
			cols = append(cols, cell("-", lay.sample))
		case lay.sample == sampleWide:
			cols = append(cols, c.sampleWide)
		default:
			cols = append(cols, c.sampleNarrow)
		}
	}
	return cols
}

// linkNote is what the status line says of the selected row's link: the certainty in words,
// the evidence, and orphaned.
func linkNote(l *EvalLink) string {
	if l == nil {
		return ""
	}
	s := "  " + l.Mark() + " " + l.How
	if l.Task != "" {
		s += " " + l.Task
	}
	if l.SampleID != "" {
		s += " sample " + l.Sample()
	}
	if l.Orphaned {
		s += ", ORPHANED (the eval process is gone; teardown --orphans removes them)"
	}
	if l.Why != "" {
		s += ": " + l.Why
	}
	return s
}

package fleet

import (
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Row is one sandbox as the table sees it. Rows are immutable once built: an update replaces the
// pointer, so a filter computed off the UI goroutine can read them without locks.
type Row struct {
	SB      backends.Sandbox
	Backend string // supervising backend's name ("docker:default")
	Stale   bool   // from the cache, or the backend is unreachable
	Sev     catalog.Severity
	Eval    *EvalLink  // the Inspect sample it serves (evals.go); nil: not linked
	cells   *linkCells // Eval's cells, laid out when it was attached
	search  string     // lower-cased text the free-text filter searches
	// findings reads SB's findings when the cache left them encoded (cachedRow); nil otherwise.
	findings func() []backends.Finding
}

// Sandbox is the row's sandbox with its findings, read now if the cache left them encoded.
func (r *Row) Sandbox() backends.Sandbox {
	sb := r.SB
	if r.findings != nil {
		sb.Findings = r.findings()
	}
	return sb
}

// NewRow precomputes what filtering and sorting need.
func NewRow(backend string, sb backends.Sandbox, stale bool) *Row {
	r := &Row{SB: sb, Backend: backend, Stale: stale, Sev: sb.WorstSeverity()}
	r.search = searchText(r)
	return r
}

func (r *Row) field(name string) string {
	switch name {
	case "backend":
		return string(r.SB.Backend)
	case "status":
		return string(r.SB.Status)
	case "task":
		return r.SB.Task
	case "name":
		return r.SB.Name
	case "eval":
		if r.Eval != nil {
			return r.Eval.Task
		}
		return ""
	case "endpoint":
		return r.SB.Endpoint
	case "id":
		return r.SB.ID
	}
	return ""
}

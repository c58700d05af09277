package fleet

import (
	"cmp"
	"strings"
)

// Column identifies a table column (also a sort key).
type Column int

const (
	ColBackend Column = iota
	ColName
	ColTask
	ColEval   // the linked Inspect eval's task (evals.go)
	ColSample // the linked sample, with how sure the link is
	ColStatus
	ColMembers
	ColAge
	ColSev
	numColumns
)

var columnNames = [...]string{"BACKEND", "SANDBOX", "TASK", "EVAL", "SAMPLE", "STATUS", "MEMBERS", "AGE", "SEV"}

func (c Column) String() string { return columnNames[c] }

// Grouping clusters rows under headers.
type Grouping int

const (
	GroupNone Grouping = iota
	GroupBackend
	GroupTask
	GroupStatus
	numGroupings
)

var groupingNames = [...]string{"none", "backend", "task", "status"}

func (g Grouping) String() string { return groupingNames[g] }

// Order is a total order over rows: group key, then the sort column, then ID.
type Order struct {
	Col   Column
	Desc  bool
	Group Grouping
}

// GroupKey is the header a row falls under.
func (o Order) GroupKey(r *Row) string {
	switch o.Group {
	case GroupBackend:
		return r.Backend
	case GroupTask:
		if r.SB.Task == "" {
			return "(no task)"
		}
		return r.SB.Task
	case GroupStatus:
		return string(r.SB.Status)
	}
	return ""
}

// Less reports whether a sorts before b.
func (o Order) Less(a, b *Row) bool { return o.Compare(a, b) < 0 }

// Compare is the three-way form of Less; it is 0 only for the same sandbox ID.
func (o Order) Compare(a, b *Row) int {
	if o.Group != GroupNone {
		if c := strings.Compare(o.GroupKey(a), o.GroupKey(b)); c != 0 {
			return c
		}
	}
	c := o.compareCol(a, b)
	if o.Desc {
		c = -c
	}
	if c != 0 {
		return c
	}
	return strings.Compare(a.SB.ID, b.SB.ID)
}

func (o Order) compareCol(a, b *Row) int {
	switch o.Col {
	case ColBackend:
		if c := strings.Compare(a.Backend, b.Backend); c != 0 {
			return c
		}
		return strings.Compare(a.SB.Name, b.SB.Name)
	case ColName:
		return strings.Compare(a.SB.Name, b.SB.Name)
	case ColTask:
		return strings.Compare(a.SB.Task, b.SB.Task)
	case ColEval:
		return compareEval(a, b)
	case ColSample:
		return compareSample(a, b)
	case ColStatus:
		return strings.Compare(string(a.SB.Status), string(b.SB.Status))
	case ColMembers:
		return cmp.Compare(len(a.SB.Members), len(b.SB.Members))
	case ColAge: // oldest first ascending = earliest created first
		return a.SB.Created.Compare(b.SB.Created)
	case ColSev: // worst first when ascending: operators want the dangerous ones on top
		return cmp.Compare(b.Sev, a.Sev)
	}
	return 0
}

package docker

import (
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.ExecLines = (*Backend)(nil)

// Bounds of the exec lines kept per sandbox: enough to catch a sample's latest commands, small
// enough that thousands of sandboxes cost little. A line longer than maxExecLine is not kept: it
// would cost the most and Inspect condenses such long tool calls anyway, so it would rarely match.
const (
	maxExecLines = 16
	maxExecLine  = 8 << 10
)

// execLines keeps, in memory only, the last maxExecLines exec command lines of each sandbox, as
// the engine's exec_start events give them (argv joined by spaces). They may carry secrets, so
// nothing here is ever persisted, logged or formatted: only RecentExecs hands them out.
type execLines struct {
	mu sync.Mutex
	by map[string]*execRing // sandbox ID → its ring
}

// execRing is one sandbox's lines: next is where the next line goes, n how many are held.
type execRing struct {
	lines [maxExecLines]string
	next  int
	n     int
}

func (x *execLines) add(sandboxID, line string) {
	if line == "" || len(line) > maxExecLine {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.by == nil {
		x.by = map[string]*execRing{}
	}
	r := x.by[sandboxID]
	if r == nil {
		r = &execRing{}
		x.by[sandboxID] = r
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % maxExecLines
	r.n = min(r.n+1, maxExecLines)
}

// recent copies a sandbox's lines, oldest first.
func (x *execLines) recent(sandboxID string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.by[sandboxID]
	if r == nil {
		return nil
	}
	out := make([]string, 0, r.n)
	for i := range r.n {
		out = append(out, r.lines[(r.next-r.n+i+maxExecLines)%maxExecLines])
	}
	return out
}

// forget drops a sandbox's lines (it is gone).
func (x *execLines) forget(sandboxID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.by, sandboxID)
}

// keep drops the lines of every sandbox not in live: a new watch's listing replaces whatever
// the last one knew, and a sandbox removed while no watch ran sent no removal.
func (x *execLines) keep(live map[string]bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for id := range x.by {
		if !live[id] {
			delete(x.by, id)
		}
	}
}

// RecentExecs implements backends.ExecLines: the last exec command lines seen (by a running
// Watch) in one of this backend's sandboxes, oldest first.
func (b *Backend) RecentExecs(sandboxID string) []string { return b.execs.recent(sandboxID) }

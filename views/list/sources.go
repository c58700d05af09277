package list

import (
	"fmt"
	"sort"

	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/detail"
)

// Snapshots lists every recorded snapshot, newest first. gone (nil: never) reports a sandbox
// removed behind rangekeeper's back: its snapshots are marked orphaned, counted on the first
// line with the command that prunes them.
func Snapshots(db *state.DB, gone func(backend, sandboxID string) bool) Loader {
	return func() ([]string, error) {
		if db == nil {
			return nil, fmt.Errorf("no state file")
		}
		recs, err := db.Snapshots("")
		var out []string
		orphans := 0
		for i := len(recs) - 1; i >= 0; i-- {
			in := recs[i].Info
			line := fmt.Sprintf("%s  %-20s %-24s %s", in.Created.UTC().Format("2006-01-02 15:04:05"), ansi.Truncate(in.Name, 20, "~"), in.ID, in.SandboxID)
			if gone != nil && gone(recs[i].Backend, in.SandboxID) {
				line += "  " + OrphanMark
				orphans++
			}
			out = append(out, line)
		}
		if orphans > 0 {
			out = append([]string{fmt.Sprintf("%d orphaned (sandbox gone): `rangekeeper snapshots prune` removes them", orphans)}, out...)
		}
		if len(out) == 0 {
			out = append(out, "no snapshots recorded")
		}
		return out, err
	}
}

// Probes lists the last verdict of every sandbox in the fleet.
func Probes(db *state.DB, fleet func() []backends.Sandbox) Loader {
	return func() ([]string, error) {
		if db == nil {
			return nil, fmt.Errorf("no state file")
		}
		var out []string
		for _, sb := range fleet() {
			ps, err := db.Probes(sb.ID, 1)
			if err != nil {
				return out, err
			}
			if len(ps) == 1 {
				out = append(out, fmt.Sprintf("%s  %-8s %-30s %s", ps[0].Time.UTC().Format("2006-01-02 15:04:05"), ps[0].Worst, sb.Name, ps[0].Summary))
			} else {
				out = append(out, fmt.Sprintf("%-19s  %-8s %-30s", "never probed", "-", sb.Name))
			}
		}
		if len(out) == 0 {
			out = append(out, "no sandboxes")
		}
		return out, nil
	}
}

// Specs lists the spec files the fleet was made from and the drafts in the state file; hint
// ends the empty list's line (how to open the author).
func Specs(db *state.DB, fleet func() []backends.Sandbox, hint string) Loader {
	return func() ([]string, error) {
		var out []string
		for _, sb := range fleet() {
			if p := detail.SpecPath(sb); p != "" {
				out = append(out, fmt.Sprintf("%-30s %s", sb.Name, p))
			}
		}
		if db != nil {
			ds, err := db.Drafts()
			if err != nil {
				return out, err
			}
			for _, d := range ds {
				out = append(out, fmt.Sprintf("draft %-24s %s %s", d.Name, d.Format, d.Target))
			}
		}
		if len(out) == 0 {
			out = append(out, "no specs known"+hint)
		}
		sort.Strings(out)
		return out, nil
	}
}

// OrphanMark ends the line of a snapshot whose sandbox is gone.
const OrphanMark = "[orphaned: sandbox gone]"

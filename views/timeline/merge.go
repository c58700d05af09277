package timeline

import (
	"sort"

	"github.com/rangekeeper/rangekeeper/state"
)

// Sources of the entries merged into the recorded timeline as it loads.
const (
	SourceAgent = "agent" // the Inspect agent's commands in the sandbox (its sample's buffer)
	SourceAlert = "alert" // the containment watch's alerts on the sandbox
)

// Merge reads more entries of a sandbox to show among the recorded ones (the agent's commands,
// the alerts), in the screen's load command.
type Merge func(sandboxID string) ([]state.TimelineEntry, error)

// SetMerge installs the extra entries' reader (before the screen opens).
func (m *Model) SetMerge(f Merge) { m.merge = f }

// merged is the recorded entries (oldest first) and the extra ones in one time order; at equal
// times a recorded entry comes first, and the extra ones keep their own order.
func merged(recorded, extra []state.TimelineEntry) []state.TimelineEntry {
	if len(extra) == 0 {
		return recorded
	}
	extra = append([]state.TimelineEntry(nil), extra...)
	sort.SliceStable(extra, func(i, j int) bool { return extra[i].Time.Before(extra[j].Time) })
	out := make([]state.TimelineEntry, 0, len(recorded)+len(extra))
	i, j := 0, 0
	for i < len(recorded) || j < len(extra) {
		if j == len(extra) || (i < len(recorded) && !extra[j].Time.Before(recorded[i].Time)) {
			out = append(out, recorded[i])
			i++
			continue
		}
		out = append(out, extra[j])
		j++
	}
	return out
}

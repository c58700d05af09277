package fleet

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestRowShowsWhoRunsTheAction: in team mode a busy row reads "reverting · alice" whole (it
// takes the members and age cells while the action runs), the columns of the other rows stay
// where they are, and a plain action name keeps the status column alone.
func TestRowShowsWhoRunsTheAction(t *testing.T) {
	for _, w := range []int{80, 120} {
		m := fleetOf(3)
		m.SetSize(w, 20)
		busy := sb("docker:a", 1).ID
		m.Activity = func(id string) string {
			switch id {
			case busy:
				return "reverting · alice"
			case sb("docker:a", 2).ID:
				return "snapshot"
			}
			return ""
		}
		var rows []string
		for _, l := range strings.Split(ansi.Strip(m.View()), "\n") {
			if strings.Contains(l, " inspect-") && !strings.Contains(l, "/inspect-") {
				rows = append(rows, l)
			}
		}
		if len(rows) != 3 {
			t.Fatalf("width %d: rows %q", w, rows)
		}
		var busyRow, plainRow, idleRow string
		for _, r := range rows {
			switch {
			case strings.Contains(r, "i000001"):
				busyRow = r
			case strings.Contains(r, "i000002"):
				plainRow = r
			default:
				idleRow = r
			}
		}
		if !strings.Contains(busyRow, "reverting · alice") {
			t.Errorf("width %d: the busy row does not name who runs it: %q", w, busyRow)
		}
		if !strings.Contains(plainRow, "snapshot 0/1") {
			t.Errorf("width %d: a plain activity took more than the status column: %q", w, plainRow)
		}
		// Every row is as wide, and its severity column starts at the same place.
		sevAt := func(r string) int {
			trimmed := strings.TrimRight(r, " ")
			return ansi.StringWidth(trimmed[:strings.LastIndex(trimmed, " ")+1])
		}
		for _, r := range rows {
			if ansi.StringWidth(r) != ansi.StringWidth(idleRow) || sevAt(r) != sevAt(idleRow) {
				t.Errorf("width %d: columns moved:\n%q\n%q", w, r, idleRow)
			}
		}
	}
}

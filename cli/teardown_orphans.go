package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
)

// runTeardownOrphans tears down, after one confirmation, the sandboxes `evals --orphans` lists:
// each through the action layer (journaled; refused there in read-only mode or on anything not
// a sandbox), the others going on when one fails.
func runTeardownOrphans(ctx context.Context, f *factory, o *teardownOptions) error {
	layer, sup, err := f.Actions(ctx)
	if err != nil {
		return err
	}
	w, err := f.evalsNow(ctx)
	if err != nil {
		return evalsErr(err)
	}
	orphans, guessed := orphansOf(linkFleet(w, sup.Fleet()))
	noteGuessed(f, guessed)
	if len(orphans) == 0 {
		if isData(o.Output) {
			return writeData(f.Out, o.Output, []manyResult{})
		}
		fmt.Fprintln(f.Out, "no orphaned sandboxes: every linked sandbox's eval is alive or its sample still runs")
		return nil
	}
	rows := make([]evalOrphan, len(orphans))
	for i, fl := range orphans {
		rows[i] = orphanOf(fl)
	}
	if !isData(o.Output) {
		if err := orphanLinksTable(f, rows); err != nil {
			return err
		}
	}
	if err := confirmCount(f, orphansQuestion(rows), len(rows), o.Yes); err != nil {
		return err
	}
	reqs := make([]action.Request, len(orphans))
	ids := make([]string, len(orphans))
	for i, fl := range orphans {
		reqs[i] = action.Request{SandboxID: fl.sb.ID, Confirmed: true}
		ids[i] = fl.sb.ID
	}
	opts := backends.TeardownOptions{KeepSnapshots: o.Keep}
	errs := layer.Many(ctx, reqs, o.Parallel, func(ctx context.Context, req action.Request) error {
		return layer.Teardown(ctx, req, opts)
	})
	return reportMany(f, o.Output, "torn down", ids, errs)
}

// orphansQuestion is what teardown --orphans asks once, naming the count and every sandbox, so
// the operator sees exactly what goes: "tear down 2 orphaned sandboxes (a, b)? Type 2 to
// confirm: " (one: "1 orphaned sandbox").
func orphansQuestion(rows []evalOrphan) string {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = dash(r.Name)
	}
	noun := "sandboxes"
	if len(rows) == 1 {
		noun = "sandbox"
	}
	return fmt.Sprintf("tear down %d orphaned %s (%s)", len(rows), noun, strings.Join(names, ", "))
}

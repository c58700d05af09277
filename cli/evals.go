package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/app"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newEvalsCmd(f, nil) }) }

type evalsOptions struct {
	Output  string
	Orphans bool
	Wait    time.Duration
	Now     func() time.Time
}

func newEvalsCmd(f *factory, runF func(context.Context, *evalsOptions) error) *cobra.Command {
	o := &evalsOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "evals",
		Short: "Inspect evals running on this host, their samples and the sandboxes linked to each (or, with --orphans, the sandboxes left behind)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *evalsOptions) error { return runEvals(ctx, f, o) })
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	cmd.Flags().BoolVar(&o.Orphans, "orphans", false, "only sandboxes whose eval process is gone and whose sample finished or eval ended")
	cmd.Flags().DurationVar(&o.Wait, "wait", 5*time.Second, "how long to wait for slow backends")
	return cmd
}

// evalSandbox is one sandbox linked to a sample (or only to an eval), and how.
type evalSandbox struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Backend  string          `json:"backend"`
	How      inspectlive.How `json:"how"`
	Why      string          `json:"why"`
	Orphaned bool            `json:"orphaned,omitempty"`
}

type evalSample struct {
	ID        string             `json:"id"`
	Epoch     int                `json:"epoch"`
	UUID      string             `json:"uuid,omitempty"`
	Status    inspectlive.Status `json:"status"`
	Elapsed   float64            `json:"elapsed_seconds,omitempty"`
	Tokens    int64              `json:"tokens"`
	Score     string             `json:"score,omitempty"`
	ScoreNote string             `json:"score_note,omitempty"`
	Error     string             `json:"error,omitempty"`
	Limit     string             `json:"limit,omitempty"`
	Sandboxes []evalSandbox      `json:"sandboxes"`
}

type evalView struct {
	Task    string       `json:"task"`
	Model   string       `json:"model,omitempty"`
	PID     int          `json:"pid"`
	Alive   bool         `json:"alive"`
	Ended   bool         `json:"ended,omitempty"`
	Stale   bool         `json:"stale,omitempty"`
	Log     string       `json:"log,omitempty"`
	Buffer  string       `json:"buffer"`
	Trace   string       `json:"trace,omitempty"`
	EvalID  string       `json:"eval_id,omitempty"`
	Samples []evalSample `json:"samples"`
	// Sandboxes are linked to this eval but to none of its samples (a guess from the name).
	Sandboxes []evalSandbox `json:"sandboxes,omitempty"`
	Problems  []string      `json:"problems,omitempty"`
}

// evalsResult is `evals -o json|yaml`. Unmatched are sandboxes linked to an eval no sample
// buffer here holds (a trace naming a sample whose buffer is gone or not yet written).
type evalsResult struct {
	Evals     []evalView   `json:"evals"`
	Unmatched []evalOrphan `json:"unmatched,omitempty"`
	Problems  []string     `json:"problems,omitempty"`
}

// evalOrphan is a sandbox with the eval and sample it is linked to, flat: the --orphans rows.
type evalOrphan struct {
	evalSandbox
	Task     string `json:"task,omitempty"`
	Model    string `json:"model,omitempty"`
	PID      int    `json:"pid,omitempty"`
	SampleID string `json:"sample_id,omitempty"`
	Epoch    int    `json:"epoch,omitempty"`
	Log      string `json:"log,omitempty"`
}

// fleetLink is a sandbox of the fleet with its link.
type fleetLink struct {
	sb backends.Sandbox
	l  inspectlive.Link
}

// linkFleet links every sandbox of the fleet Inspect could have made; the rest are left out.
func linkFleet(w *inspectlive.Watcher, fleet []backends.Sandbox) []fleetLink {
	var out []fleetLink
	for _, sb := range fleet {
		if l := w.Link(sb); l.How != inspectlive.HowUnknown {
			out = append(out, fleetLink{sb, l})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].sb.ID < out[j].sb.ID })
	return out
}

func sandboxOf(fl fleetLink) evalSandbox {
	return evalSandbox{ID: fl.sb.ID, Name: fl.sb.Name, Backend: string(fl.sb.Backend), How: fl.l.How, Why: fl.l.Why, Orphaned: fl.l.Orphaned}
}

func orphanOf(fl fleetLink) evalOrphan {
	return evalOrphan{evalSandbox: sandboxOf(fl), Task: fl.l.Eval.Task, Model: fl.l.Eval.Model, PID: fl.l.Eval.PID,
		SampleID: fl.l.SampleID, Epoch: fl.l.Epoch, Log: fl.l.Eval.LogPath}
}

// orphansOf keeps the linked sandboxes whose eval process is gone and whose sample finished
// (or eval ended): nothing will ever tear them down but an operator. A link that is only a
// guess from the project's name is kept apart (guessed): the sandbox may belong to another
// host's eval of the same task, and an orphan is what `teardown --orphans` removes.
func orphansOf(links []fleetLink) (orphans, guessed []fleetLink) {
	for _, fl := range links {
		switch {
		case !fl.l.Orphaned || !fl.sb.Actionable:
		case fl.l.How == inspectlive.HowGuessed:
			guessed = append(guessed, fl)
		default:
			orphans = append(orphans, fl)
		}
	}
	return orphans, guessed
}

// noteGuessed says on stderr which sandboxes look orphaned by their name alone.
func noteGuessed(f *factory, guessed []fleetLink) {
	if len(guessed) == 0 {
		return
	}
	names := make([]string, len(guessed))
	for i, fl := range guessed {
		names[i] = dash(fl.sb.Name)
	}
	fmt.Fprintf(f.ErrOut, "rangekeeper: %d sandboxes look orphaned only by a guess from their name, left out: %s\n", len(guessed), strings.Join(names, ", "))
}

// fleetAndEvals is the one-shot join: the ready fleet and one fresh poll of Inspect's files.
func fleetAndEvals(ctx context.Context, f *factory, wait time.Duration) (*inspectlive.Watcher, []fleetLink, error) {
	w, err := f.evalsNow(ctx)
	if err != nil {
		return nil, nil, evalsErr(err)
	}
	s, err := f.ReadySupervisor(ctx, wait)
	if err != nil {
		return nil, nil, err
	}
	return w, linkFleet(w, s.Fleet()), nil
}

// evalsErr makes the linkage turned off in the config bad input for a command that is nothing
// but the linkage.
func evalsErr(err error) error {
	if errors.Is(err, app.ErrEvalsOff) {
		return exitWith(2, err.Error())
	}
	return err
}

func runEvals(ctx context.Context, f *factory, o *evalsOptions) error {
	w, links, err := fleetAndEvals(ctx, f, o.Wait)
	if err != nil {
		return err
	}
	if o.Orphans {
		orphans, guessed := orphansOf(links)
		noteGuessed(f, guessed)
		rows := []evalOrphan{}
		for _, fl := range orphans {
			rows = append(rows, orphanOf(fl))
		}
		if isData(o.Output) {
			return writeData(f.Out, o.Output, rows)
		}
		return orphanLinksTable(f, rows)
	}
	res := buildEvals(w.Evals(), links, o.Now())
	res.Problems = w.Problems()
	if isData(o.Output) {
		return writeData(f.Out, o.Output, res)
	}
	return evalsTable(f, res)
}

// buildEvals joins the evals with the sandboxes linked to them.
func buildEvals(evals []inspectlive.Eval, links []fleetLink, now time.Time) evalsResult {
	res := evalsResult{Evals: make([]evalView, 0, len(evals))}
	type at struct{ e, s int }
	samples := map[string]at{}
	byKey := map[inspectlive.EvalKey]int{}
	for i, e := range evals {
		v := evalView{Task: e.Task, Model: e.Model, PID: e.PID, Alive: e.Alive, Ended: e.Ended, Stale: e.Stale, Log: e.LogPath,
			Buffer: e.BufferPath, Trace: e.TracePath, EvalID: e.EvalID, Problems: e.Problems, Samples: make([]evalSample, 0, len(e.Samples))}
		byKey[e.Key] = i
		for j, s := range e.Samples {
			v.Samples = append(v.Samples, evalSample{ID: s.ID, Epoch: s.Epoch, UUID: s.UUID, Status: s.Status, Elapsed: elapsed(s, now).Seconds(),
				Tokens: max(s.Tokens, s.Usage), Score: s.Score, ScoreNote: s.ScoreNote, Error: s.Error, Limit: s.Limit, Sandboxes: []evalSandbox{}})
			samples[string(e.Key)+"\x00"+s.ID+"\x00"+fmt.Sprint(s.Epoch)] = at{i, j}
		}
		res.Evals = append(res.Evals, v)
	}
	for _, fl := range links {
		k := fl.l.Eval.Key
		if p, ok := samples[string(k)+"\x00"+fl.l.SampleID+"\x00"+fmt.Sprint(fl.l.Epoch)]; ok && fl.l.SampleID != "" {
			s := &res.Evals[p.e].Samples[p.s]
			s.Sandboxes = append(s.Sandboxes, sandboxOf(fl))
			continue
		}
		if i, ok := byKey[k]; ok && k != "" {
			res.Evals[i].Sandboxes = append(res.Evals[i].Sandboxes, sandboxOf(fl))
			continue
		}
		if fl.l.How != inspectlive.HowGuessed {
			// A guess names a task no eval here runs: the project's name is all there is.
			res.Unmatched = append(res.Unmatched, orphanOf(fl))
		}
	}
	return res
}

// elapsed is the sample's run time: Inspect's own total when it has one, else since it started
// (until its last event once it is done).
func elapsed(s inspectlive.SampleState, now time.Time) time.Duration {
	if s.TotalTime > 0 {
		return time.Duration(s.TotalTime * float64(time.Second))
	}
	if s.StartedAt.IsZero() {
		return 0
	}
	end := now
	if s.Status.Done() && !s.LastEvent.IsZero() {
		end = s.LastEvent
	}
	if end.Before(s.StartedAt) {
		return 0
	}
	return end.Sub(s.StartedAt)
}

func processState(v evalView) string {
	switch {
	case v.Alive && v.Stale:
		return "alive (buffer locked: state may be behind)"
	case v.Alive:
		return "alive"
	case v.Ended:
		return "ended"
	default:
		return "gone"
	}
}

func evalsTable(f *factory, res evalsResult) error {
	if len(res.Evals) == 0 && len(res.Unmatched) == 0 {
		fmt.Fprintln(f.Out, "no Inspect evals found in the configured data directories")
	}
	for i, v := range res.Evals {
		if i > 0 {
			fmt.Fprintln(f.Out)
		}
		fmt.Fprintf(f.Out, "EVAL %s  model %s  pid %d (%s)  log %s\n", dash(v.Task), dash(v.Model), v.PID, processState(v), dash(v.Log))
		for _, p := range v.Problems {
			fmt.Fprintf(f.Out, "  problem: %s\n", dash(p))
		}
		tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  SAMPLE\tEPOCH\tSTATUS\tELAPSED\tTOKENS\tSCORE\tSANDBOX\tHOW")
		for _, s := range v.Samples {
			row := fmt.Sprintf("  %s\t%d\t%s\t%s\t%d\t%s", dash(s.ID), s.Epoch, s.Status, (time.Duration(s.Elapsed) * time.Second).Round(time.Second), s.Tokens, dash(s.Score))
			if len(s.Sandboxes) == 0 {
				fmt.Fprintf(tw, "%s\t-\t-\n", row)
			}
			for _, sb := range s.Sandboxes {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", row, sandboxCell(sb), sb.How)
			}
		}
		for _, sb := range v.Sandboxes {
			fmt.Fprintf(tw, "  ?\t-\t-\t-\t-\t-\t%s\t%s\n", sandboxCell(sb), sb.How)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(res.Unmatched) > 0 {
		fmt.Fprintln(f.Out, "\nSandboxes linked to an eval no sample buffer here holds:")
		if err := orphanLinksTable(f, res.Unmatched); err != nil {
			return err
		}
	}
	for _, p := range res.Problems {
		fmt.Fprintf(f.ErrOut, "rangekeeper: inspect: %s\n", dash(p))
	}
	return nil
}

func sandboxCell(sb evalSandbox) string {
	s := dash(sb.Name)
	if sb.Orphaned {
		s += " (orphaned)"
	}
	return s
}

func orphanLinksTable(f *factory, rows []evalOrphan) error {
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tBACKEND\tTASK\tSAMPLE\tEPOCH\tPID\tHOW\tWHY")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(r.Name), r.Backend, dash(r.Task), dash(r.SampleID), orDash(r.Epoch), orDash(r.PID), r.How, dash(r.Why))
	}
	return tw.Flush()
}

// orDash is a number cell, "-" when unknown (zero).
func orDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

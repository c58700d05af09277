package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
	"github.com/rangekeeper/rangekeeper/verify/dockerstage"
	"github.com/rangekeeper/rangekeeper/verify/render"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newVerifyCmd(f, nil) }) }

// verifyTestLabels are added to everything verify creates; the engine tests set the test labels
// so a failed run is swept.
var verifyTestLabels map[string]string

// verifyTestImageRepo, when set, is the canary image repository of this test process alone.
var verifyTestImageRepo string

// verifyOutputs are the -o values, text first (the default).
var verifyOutputs = []string{"text", "json", "sarif", "junit", "yaml"}

type verifyOptions struct {
	Spec        string
	Expect      string
	Service     string
	Output      string
	FailOn      catalog.Severity
	EnvFiles    []string
	Set         []string
	AllServices bool
	Keep        bool
	Pull        bool
	IsolateEnv  bool
	Timeout     time.Duration
	Down        string
	Root        string // project root for lint: --root, else the repository holding SPEC, else cwd
	NoColor     bool
	Color       bool // colour the text output: a terminal, no NO_COLOR, no --no-color
}

func newVerifyCmd(f *factory, runF func(context.Context, *verifyOptions) error) *cobra.Command {
	o := &verifyOptions{}
	var failOn string
	cmd := &cobra.Command{
		Use:   "verify SPEC",
		Short: "Stand a compose spec up on the local Docker engine, prove it holds, tear it down",
		Long: `Lint SPEC, stand it up under a unique project labelled dev.rangekeeper.verify=<run>, wait until
it is running (and healthy), run the escape probe in the agent service (x-default, else default,
else the first; --service to choose, --all-services for every one), check what it reaches among
canaries verify owns — a listener outside its networks (egress), its DNS path, the host side of
its bridges, the scorer — compare the measured T.H.N profile with --expect (or x-rangekeeper.expect,
else the spec's lint profile), and tear everything down, also on failure, timeout and Ctrl-C.

Variables for interpolation (SAMPLE_METADATA_* and others) come, as with compose, from
--env-file (default: .env next to SPEC) overridden by this process's environment (unless
--isolate-env); --set wins over both.

The run is an action of the action layer like a probe: journaled with who asked (intent, outcome
with the measured profile), refused in read-only mode; its probes go through the layer too, and
the result is kept in the probe history (` + "`rangekeeper journal --target verify:<abs path>`" + `).

Exit status: 0 holds, 1 weaker than expected or a finding at/above --fail-on, 2 bad input,
3 could not verify (engine, image, deadline, interrupted).`,
		Args:          cobra.RangeArgs(0, 1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Spec = args[0]
			}
			if o.Spec == "" && o.Down == "" {
				return exitWith(2, "verify: want SPEC (or --down RUN)")
			}
			if o.Spec != "" && o.Down != "" {
				return exitWith(2, "verify: SPEC and --down exclude each other")
			}
			if o.Spec != "" {
				// As lint does: a spec that includes or extends a file elsewhere in its
				// repository verifies, and one reaching outside it is refused.
				o.Root = lintRoot(o.Root, o.Spec)
			}
			o.Output = strings.ToLower(o.Output)
			if !slices.Contains(verifyOutputs, o.Output) {
				return exitWith(2, fmt.Sprintf("unknown --output %q (want %s)", o.Output, strings.Join(verifyOutputs, ", ")))
			}
			sev, err := catalog.ParseSeverity(failOn)
			if err != nil {
				return exitWith(2, err.Error())
			}
			o.FailOn = sev
			if o.Timeout <= 0 {
				return exitWith(2, fmt.Sprintf("--timeout %s: want a positive duration", o.Timeout))
			}
			_, noColor := os.LookupEnv("NO_COLOR")
			o.Color = f.StdoutTTY() && !noColor && !o.NoColor
			return runOr(cmd, o, runF, func(ctx context.Context, o *verifyOptions) error { return runVerify(ctx, f, o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Expect, "expect", "", "expected profile, e.g. T0.H1.N2 or ...N2 (default: x-rangekeeper.expect, else the lint profile)")
	fl.StringVar(&o.Service, "service", "", "the agent service (default: Inspect's rule)")
	fl.StringVarP(&o.Output, "output", "o", "text", "output: "+strings.Join(verifyOutputs, ", "))
	fl.StringVar(&failOn, "fail-on", "high", "exit 1 when a finding is at least: critical, high, medium, low or info")
	fl.StringArrayVar(&o.EnvFiles, "env-file", nil, "file of KEY=VALUE variables for interpolation (repeatable)")
	fl.StringArrayVar(&o.Set, "set", nil, "KEY=VALUE variable for interpolation (repeatable; wins over every other source)")
	fl.BoolVar(&o.AllServices, "all-services", false, "probe every service, not only the agent")
	fl.BoolVar(&o.Keep, "keep", false, "leave the sandbox and canaries for inspection and print how to remove them")
	fl.BoolVar(&o.Pull, "pull", false, "let the engine pull missing images (default: they must be present)")
	fl.BoolVar(&o.IsolateEnv, "isolate-env", false, "ignore this process's environment: variables only from --env-file and --set")
	fl.DurationVar(&o.Timeout, "timeout", verify.DefaultTimeout, "deadline for standing up, waiting and probing (teardown has its own)")
	fl.StringVar(&o.Down, "down", "", "remove what a kept or interrupted run left (a run ID, or all)")
	fl.StringVar(&o.Root, "root", "", "project root: include/extends/env_file may read under it (default: the repository holding the spec, else the current directory)")
	fl.BoolVar(&o.NoColor, "no-color", false, "never colour the text output")
	return cmd
}

func runVerify(ctx context.Context, f *factory, o *verifyOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return exitWith(2, err.Error())
	}
	if cfg.ReadOnly && o.Down == "" {
		return exitWith(2, "verify creates and removes containers on the engine; refused in read-only mode")
	}
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		return exitWith(3, "could not verify: "+err.Error())
	}
	defer b.Close()
	drv, err := dockerstage.New(dockerstage.Options{Backend: b, Canary: canary.Binary, Pull: o.Pull,
		Labels: verifyTestLabels, ImageLabels: verifyTestLabels, ImageRepo: verifyTestImageRepo})
	if err != nil {
		return exitWith(3, "could not verify: "+err.Error())
	}
	if o.Down != "" {
		return verifyDown(ctx, f, drv, o.Down)
	}
	env, err := verifyEnv(o)
	if err != nil {
		return exitWith(2, err.Error())
	}
	db, err := f.State()
	if err != nil {
		return exitWith(2, err.Error())
	}
	// The layer resolves no fleet: verify stages the sandbox it stands up for its own probes.
	layer, err := f.layer(noFleet{})
	if err != nil {
		return exitWith(2, err.Error())
	}
	runID := verify.NewRunID()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopSignals := onSignals(f, drv, runID, cancel)
	defer stopSignals()
	who := f.Identity()
	res := verify.RunAction(ctx, layer, who, db, verify.Options{
		Spec: o.Spec, Root: o.Root, Expect: o.Expect, Service: o.Service, AllServices: o.AllServices, FailOn: o.FailOn, Env: env,
		Targets: probe.TargetsFrom(cfg.Probe), Timeout: o.Timeout, Keep: o.Keep, RunID: runID,
		Progress: func(s verify.Step) { verifyProgress(f, s) },
	}, verify.Deps{Driver: drv, Prober: verify.LayerProber(layer, b, who)})
	if err := writeVerify(f, o, res); err != nil {
		return err
	}
	return verifyExit(o, res)
}

// writeVerify renders the result in the chosen output.
func writeVerify(f *factory, o *verifyOptions, res verify.Result) error {
	switch o.Output {
	case "json", "yaml":
		return writeFormat(f.Out, o.Output, func(w io.Writer) error { return render.JSON(w, res) })
	case "sarif":
		return render.SARIF(f.Out, res, render.SARIFOptions{Version: version})
	case "junit":
		return render.JUnit(f.Out, res)
	}
	return render.Text(f.Out, res, render.TextOptions{Color: o.Color})
}

// verifyExit is the result's exit status; the text report already ends with the reason.
func verifyExit(o *verifyOptions, res verify.Result) error {
	switch {
	case res.Exit == verify.ExitHolds:
		return nil
	case o.Output == "text":
		return exitWith(res.Exit, "")
	}
	return exitWith(res.Exit, res.Outcome+": "+res.Reason)
}

// noFleet resolves no sandbox: the layer verify runs on knows only what verify stages.
type noFleet struct{}

func (noFleet) Lookup(string) (backends.Backend, backends.Sandbox, bool) {
	return nil, backends.Sandbox{}, false
}
func (noFleet) Fleet() []backends.Sandbox { return nil }

// verifyEnv assembles the interpolation variables with compose's precedence (the process's
// environment over the env file), then --set over both. Values are never printed.
func verifyEnv(o *verifyOptions) (map[string]string, error) {
	var environ []string
	if !o.IsolateEnv {
		environ = os.Environ()
	}
	return composeEnv(o.Spec, o.EnvFiles, environ, o.Set)
}

func verifyProgress(f *factory, s verify.Step) {
	switch s.Status {
	case "":
		fmt.Fprintf(f.ErrOut, "verify: %s…\n", s.Name)
	case "failed":
		fmt.Fprintf(f.ErrOut, "verify: %s failed after %s: %s\n", s.Name, time.Duration(s.DurationMS)*time.Millisecond, s.Error)
	}
}

// onSignals makes the first Ctrl-C (or SIGTERM) cancel the run, which then tears down; a second
// one leaves at once, saying how to remove what is left. The returned func stops listening.
func onSignals(f *factory, drv *dockerstage.Driver, runID string, cancel context.CancelFunc) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintf(f.ErrOut, "verify: stopping; tearing down run %s (interrupt again to leave it and remove it later)\n", runID)
		cancel()
		select {
		case <-sigs:
			fmt.Fprintf(f.ErrOut, "verify: left run %s; remove it with: %s\n", runID, drv.RemoveCommand(runID))
			os.Exit(verify.ExitCouldNotRun)
		case <-done:
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

// verifyDown removes one run's leftovers, or every run's and the cached canary images.
func verifyDown(ctx context.Context, f *factory, drv *dockerstage.Driver, which string) error {
	runs := []string{which}
	if which == "all" {
		var err error
		if runs, err = drv.Runs(ctx); err != nil {
			return exitWith(3, "could not list verify runs: "+err.Error())
		}
	}
	var failed []string
	for _, id := range runs {
		removed, left, err := drv.Teardown(ctx, id)
		fmt.Fprintf(f.Out, "run %s: removed %s\n", id, removed)
		if err != nil || !left.Zero() {
			failed = append(failed, fmt.Sprintf("%s: %v left (%v)", id, left, err))
		}
	}
	if which == "all" {
		n, err := drv.RemoveCanaryImages(ctx)
		fmt.Fprintf(f.Out, "removed %d canary image(s)\n", n)
		if err != nil {
			failed = append(failed, "canary images: "+err.Error())
		}
	}
	sort.Strings(failed)
	if len(failed) > 0 {
		return exitWith(3, strings.Join(failed, "; "))
	}
	return nil
}

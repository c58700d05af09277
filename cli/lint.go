package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/spec/report"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newLintCmd(f, nil) }) }

type lintOptions struct {
	Files    []string
	Output   string
	FailOn   string
	Format   string
	Engine   string
	Agents   []string
	Roles    []string
	Tooling  string
	Runtime  string
	Runtimes []string
	Outside  bool
	EnvFiles []string
	Set      []string
	Root     string
	NoColor  bool
	useColor bool
}

func newLintCmd(f *factory, runF func(context.Context, *lintOptions) error) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint FILE|DIR...",
		Short: "Check sandbox specs (Compose, agent-env values, Proxmox) for hardening weaknesses",
		Long: `Lint sandbox specs on the tooling, host and network axes and classify their T.H.N profile.

A directory is walked for the specs a user would mean (compose*.y[a]ml, docker-compose*.y[a]ml,
*values.yaml, helm-values.yaml, *.fw, <vmid>.conf, *proxmox*.y[a]ml), skipping .git and vendor.
Files are recognised as Inspect's providers recognise them: values.yaml, *-values.yaml and
helm-values.yaml are agent-env Helm values; other names are told by their content.

Variables are interpolated as docker compose does: --env-file (repeatable; default: the .env
beside each spec), this process's environment over it, --set over both. A variable that is unset
and has no default is a finding (CMP-V01); one required with ${VAR:?why} refuses the file.

include, extends and env_file may read files anywhere under the project root: --root, else the
nearest directory above the spec holding .git, else the current directory. File names in every
output are relative to that root.

Exit status: 0 clean, 1 findings at or above --fail-on, 2 unreadable or invalid input (every
refused file is listed in the output: text, JSON "refused", SARIF tool notifications).
Suppress a finding with a reason on its line or the line above:
  # rangekeeper:ignore CMP-N03 scorer reachable only through the proxy`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			_, noColor := os.LookupEnv("NO_COLOR")
			o.useColor = f.StdoutTTY() && !noColor && !o.NoColor
			return runOr(cmd, o, runF, func(_ context.Context, o *lintOptions) error { return runLint(f, o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.Output, "output", "o", "text", "output: text, json, yaml or sarif")
	fl.StringVar(&o.FailOn, "fail-on", "high", "exit 1 when a finding is at least: critical, high, medium, low or info")
	fl.StringVar(&o.Format, "format", "", "force the input format: compose, helm, proxmox, qm, pve-fw, or compose-k8s for a Compose file used as a k8s spec (default: detect)")
	fl.StringVar(&o.Engine, "engine-version", "", "Docker Engine version the spec runs on (enables CMP-N06)")
	fl.StringSliceVar(&o.Agents, "agent", nil, "service(s) the model gets a shell in (default: as Inspect, the x-default service, else default, else the first)")
	fl.StringSliceVar(&o.Roles, "role", nil, "service roles as name=role (scorer, ledger, grader, proxy, target)")
	fl.StringVar(&o.Tooling, "tooling", "", "tooling level to report in the profile: T0, T1 or T2")
	fl.StringVar(&o.Runtime, "sandboxed-runtime", "", "policy for an agent without gVisor/Kata: required (HIGH), recommended (MEDIUM) or off (INFO); default: the config's lint.policy.sandboxed_runtime, else recommended")
	fl.StringSliceVar(&o.Runtimes, "engine-runtimes", nil, "runtimes the target engine offers (docker info), e.g. runc,runsc; a recommendation it cannot follow drops to INFO")
	fl.BoolVar(&o.Outside, "allow-outside-project", false, "let include/extends/env_file read files outside the project root")
	fl.StringArrayVar(&o.EnvFiles, "env-file", nil, "file of KEY=VALUE variables for interpolation (repeatable; default: .env beside each spec)")
	fl.StringArrayVar(&o.Set, "set", nil, "KEY=VALUE variable for interpolation (repeatable; wins over the environment and env files)")
	fl.StringVar(&o.Root, "root", "", "project root: include/extends/env_file may read under it, and paths are shown relative to it (default: the repository holding the spec, else the current directory)")
	fl.BoolVar(&o.NoColor, "no-color", false, "never colour the text output")
	return cmd
}

func runLint(f *factory, o *lintOptions) error {
	failOn, err := catalog.ParseSeverity(o.FailOn)
	if err != nil {
		return exitWith(2, err.Error())
	}
	format, err := spec.ParseFormat(o.Format)
	if err != nil {
		return exitWith(2, err.Error())
	}
	out := strings.ToLower(o.Output)
	if out != "text" && !isData(out) && out != "sarif" {
		return exitWith(2, fmt.Sprintf("unknown --output %q (want text, json, yaml or sarif)", o.Output))
	}
	policy, err := lintPolicy(f, o.Runtime)
	if err != nil {
		return exitWith(2, err.Error())
	}
	opts := spec.Options{Format: format, EngineVersion: o.Engine, AgentServices: o.Agents, Tooling: o.Tooling, Roles: map[string]string{},
		RuntimePolicy: policy, EngineRuntimes: o.Runtimes, AllowOutsideProject: o.Outside}
	for _, r := range o.Roles {
		name, role, ok := strings.Cut(r, "=")
		if !ok {
			return exitWith(2, fmt.Sprintf("--role %q: want name=role", r))
		}
		opts.Roles[name] = role
	}
	for _, file := range o.EnvFiles {
		// An explicit --env-file is checked once, up front: its error is the caller's, not a spec's.
		if _, err := composeEnv("", []string{file}, nil, nil); err != nil {
			return exitWith(2, redact.Message(err.Error()))
		}
	}
	if _, err := composeEnv("", nil, nil, o.Set); err != nil {
		return exitWith(2, err.Error())
	}
	results, refused, fragments := lintAll(f, o, opts)
	switch out {
	case "json", "yaml":
		err = writeFormat(f.Out, out, func(w io.Writer) error { return report.JSON(w, results, refused, fragments...) })
	case "sarif":
		err = report.SARIF(f.Out, results, report.SARIFOptions{Version: version, Refused: refused})
	default:
		err = report.Text(f.Out, results, report.TextOptions{Color: o.useColor, Refused: refused, Fragments: fragments})
	}
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		msgs := make([]string, len(refused))
		for i, r := range refused {
			msgs[i] = r.Where() + ": " + r.Message
		}
		return exitWith(2, strings.Join(msgs, "\n"))
	}
	for _, r := range results {
		if r.CountAtLeast(failOn) > 0 {
			return exitWith(1, "")
		}
	}
	return nil
}

// lintPolicy is the sandboxed-runtime policy: the flag, else the config file's, else the default.
func lintPolicy(f *factory, flag string) (catalog.RuntimePolicy, error) {
	if flag != "" {
		p, err := catalog.ParseRuntimePolicy(flag)
		if err != nil {
			return "", fmt.Errorf("--sandboxed-runtime: %w", err)
		}
		return p, nil
	}
	cfg, err := f.Config()
	if err != nil {
		return "", err
	}
	return catalog.ParseRuntimePolicy(string(cfg.Lint.Policy.SandboxedRuntime))
}

package cli

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/probe/verdict"
)

// parse runs cmd's argument and flag handling only: the runF seam captures the options instead
// of touching an engine, so these tests need none.
func parse[O any](t *testing.T, build func(f *factory, runF func(context.Context, O) error) *cobra.Command, args ...string) (O, error) {
	t.Helper()
	var got O
	var out bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &out)
	cmd := build(f, func(_ context.Context, o O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return got, err
}

func TestCommandsParseArgumentsAndFlagsWithoutAnEngine(t *testing.T) {
	checkParses(t, []parseCase{
		{"snapshot", func(t *testing.T) (any, error) {
			o, err := parse(t, newSnapshotCmd, "web", "--name", "s1", "--no-pause", "-o", "json")
			return deref(o), err
		}, snapshotOptions{Sandbox: "web", Name: "s1", NoPause: true, Output: "json"}, ""},
		{"serve", func(t *testing.T) (any, error) {
			o, err := parse(t, newServeCmd, "--listen", "127.0.0.1:2300", "--operators", "ops.yaml", "--max-sessions", "4", "--fps", "20")
			return deref(o), err
		}, serveOptions{Listen: "127.0.0.1:2300", Operators: "ops.yaml", MaxSessions: 4, Idle: 30 * time.Minute, Rate: 1, Grace: 2 * time.Minute, FPS: 20}, ""},
		{"serve takes no argument", func(t *testing.T) (any, error) {
			o, err := parse(t, newServeCmd, "extra")
			return deref(o), err
		}, serveOptions{}, "unknown command"},
		{"snapshot bad output", func(t *testing.T) (any, error) {
			o, err := parse(t, newSnapshotCmd, "web", "-o", "xml")
			return deref(o), err
		}, snapshotOptions{}, `--output "xml"`},
		{"snapshot yaml output", func(t *testing.T) (any, error) {
			o, err := parse(t, newSnapshotCmd, "web", "-o", "yaml")
			return deref(o), err
		}, snapshotOptions{Sandbox: "web", Output: "yaml"}, ""},
		{"snapshot needs one sandbox", func(t *testing.T) (any, error) {
			o, err := parse(t, newSnapshotCmd)
			return deref(o), err
		}, snapshotOptions{}, "accepts 1 arg"},
		{"revert by name", func(t *testing.T) (any, error) {
			o, err := parse(t, newRevertCmd, "web", "s1", "--yes", "--start=false")
			return deref(o), err
		}, revertOptions{Sandbox: "web", Snapshot: "s1", Yes: true}, ""},
		{"revert newest", func(t *testing.T) (any, error) {
			o, err := parse(t, newRevertCmd, "k8s:arn:aws:eks:eu-west-2:123:cluster/prod/evals/rel")
			return deref(o), err
		}, revertOptions{Sandbox: "k8s:arn:aws:eks:eu-west-2:123:cluster/prod/evals/rel", Start: true}, ""},
		{"teardown several", func(t *testing.T) (any, error) {
			o, err := parse(t, newTeardownCmd, "a", "b", "--parallel", "3", "--keep-snapshots", "-y", "-o", "json")
			return deref(o), err
		}, teardownOptions{Sandboxes: []string{"a", "b"}, Yes: true, Keep: true, Parallel: 3, Output: "json"}, ""},
		{"teardown parallel 0", func(t *testing.T) (any, error) {
			o, err := parse(t, newTeardownCmd, "a", "--parallel", "0")
			return deref(o), err
		}, teardownOptions{}, "--parallel 0"},
		{"exec", func(t *testing.T) (any, error) {
			o, err := parse(t, newExecCmd, "web", "--member", "db", "--timeout", "5s", "--", "id", "-u")
			return deref(o), err
		}, execOptions{Sandbox: "web", Cmd: []string{"id", "-u"}, Member: "db", Timeout: 5 * time.Second, Output: "table"}, ""},
		{"exec without --", func(t *testing.T) (any, error) {
			o, err := parse(t, newExecCmd, "web", "id")
			return deref(o), err
		}, execOptions{}, "usage: rangekeeper exec"},
		{"probe", func(t *testing.T) (any, error) {
			o, err := parse(t, newProbeCmd, "a", "b", "-o", "JSON", "--runc-version", "1.1.5", "--member", "default")
			return deref(o), err
		}, probeOptions{Sandboxes: []string{"a", "b"}, Output: "json", Member: "default", Versions: verdict.Versions{Runc: "1.1.5"}, Timeout: 2 * time.Minute}, ""},
		{"probe bad output", func(t *testing.T) (any, error) {
			o, err := parse(t, newProbeCmd, "a", "-o", "xml")
			return deref(o), err
		}, probeOptions{}, `unknown --output "xml"`},
		{"journal", func(t *testing.T) (any, error) {
			o, err := parse(t, newJournalCmd, "--target", "web", "-n", "5", "-o", "json")
			return deref(o), err
		}, journalOptions{Target: "web", Limit: 5, Output: "json"}, ""},
		{"journal negative limit", func(t *testing.T) (any, error) {
			o, err := parse(t, newJournalCmd, "-n", "-1")
			return deref(o), err
		}, journalOptions{}, "--limit -1"},
		{"author file", func(t *testing.T) (any, error) {
			o, err := parse(t, newAuthorCmd, "compose.yaml", "--engine-version", "27.1")
			return deref(o), err
		}, authorOptions{Path: "compose.yaml", Engine: "27.1"}, ""},
		{"demo fleet", func(t *testing.T) (any, error) {
			o, err := parse(t, newDemoCmd, "--down", "--fleet", "0")
			return deref(o), err
		}, demoOptions{Down: true}, ""},
		{"pve sim error rate", func(t *testing.T) (any, error) {
			o, err := parse(t, newPVECmdSim, "--secret-file", "s", "--error-rate", "1.5")
			return deref(o), err
		}, pveSimOptions{}, "--error-rate must be between 0 and 1"},
	})
}

func TestSnapshotsSubcommandsParse(t *testing.T) {
	var ls *snapshotsLsOptions
	var rm *snapshotsRmOptions
	build := func(args ...string) error {
		f := newFactory(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
		cmd := newSnapshotsCmd(f, func(_ context.Context, o *snapshotsLsOptions) error { ls = o; return nil },
			func(_ context.Context, o *snapshotsRmOptions) error { rm = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		return cmd.Execute()
	}
	if err := build("ls", "web", "-o", "json"); err != nil || ls == nil || *ls != (snapshotsLsOptions{Sandbox: "web", Output: "json"}) {
		t.Fatalf("snapshots ls = %+v, %v", ls, err)
	}
	if err := build("rm", "web", "before-fix", "--yes"); err != nil || rm == nil || *rm != (snapshotsRmOptions{Sandbox: "web", Snapshot: "before-fix", Yes: true}) {
		t.Fatalf("snapshots rm = %+v, %v", rm, err)
	}
	if err := build("rm", "web"); err == nil {
		t.Error("snapshots rm without a snapshot was accepted")
	}
}

func deref[O any](o *O) O {
	if o == nil {
		var zero O
		return zero
	}
	return *o
}

// newPVECmdSim is `pve sim` with the runF seam, for the table above.
func newPVECmdSim(f *factory, runF func(context.Context, *pveSimOptions) error) *cobra.Command {
	root := newPVECmd(f, runF)
	return &cobra.Command{Use: "sim", DisableFlagParsing: true, RunE: func(cmd *cobra.Command, args []string) error {
		root.SetArgs(append([]string{"sim"}, args...))
		root.SetOut(cmd.OutOrStdout())
		root.SetErr(cmd.ErrOrStderr())
		return root.Execute()
	}}
}

// parseCase is one command line parsed through a command's runF seam: the options it gives, or
// the error it must say.
type parseCase struct {
	name string
	run  func(t *testing.T) (any, error)
	want any
	err  string
}

// checkParses runs each case as a subtest.
func checkParses(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.run(t)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("options\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/time/rate"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/app"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
	"github.com/rangekeeper/rangekeeper/daemon/sshd"
	"github.com/rangekeeper/rangekeeper/internal/procs"
	"github.com/rangekeeper/rangekeeper/internal/strictmodes"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/tui"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newServeCmd(f, nil) }) }

// served is what a command line run inside the daemon uses instead of its own assembly: the
// daemon's (its state file, supervisor and watch) and the daemon's one layer, acting for who.
type served struct {
	app   *app.App
	layer *action.Layer
	who   action.Identity
}

// remoteCommands go through the daemon's socket when one runs: every action kind declared to
// route there (its locks, roles and journal), and the reads that show the team's state.
var remoteCommands = func() map[string]bool {
	m := map[string]bool{"ls": true, "journal": true, "alerts": true, "evals": true}
	for _, v := range backends.RemoteVerbs() {
		m[v] = true
	}
	return m
}()

type serveOptions struct {
	Listen      string
	Operators   string
	MaxSessions int
	Idle        time.Duration
	Rate        float64
	Grace       time.Duration
	FPS         int
}

func newServeCmd(f *factory, runF func(context.Context, *serveOptions) error) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the range to its team: the workbench over SSH, the CLI over a local socket, one set of locks and one journal",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOr(cmd, o, runF, func(ctx context.Context, o *serveOptions) error { return runServe(ctx, f, o) })
		},
	}
	cmd.Flags().StringVar(&o.Listen, "listen", sshd.DefaultAddr, "SSH listen address (loopback by default)")
	cmd.Flags().StringVar(&o.Operators, "operators", "", "operators file (default: operators.yaml beside the config file)")
	cmd.Flags().IntVar(&o.MaxSessions, "max-sessions", 32, "most SSH sessions at once")
	cmd.Flags().DurationVar(&o.Idle, "idle-timeout", 30*time.Minute, "close an SSH connection without input (keys, window changes) for this long")
	cmd.Flags().Float64Var(&o.Rate, "action-rate", 1, "actions a second each operator may start (burst 5)")
	cmd.Flags().IntVar(&o.FPS, "fps", sshd.DefaultFPS, "frame cap of each SSH session (latency vs idle CPU)")
	cmd.Flags().DurationVar(&o.Grace, "grace", 2*time.Minute, "on SIGTERM, how long running actions may take to finish")
	return cmd
}

// socketPath is the daemon's socket beside the state file.
func socketPath(statePath string) string {
	return filepath.Join(filepath.Dir(statePath), "rangekeeper.sock")
}

func runServe(ctx context.Context, f *factory, o *serveOptions) error {
	procs.ForInteractive() // the operators' sessions are interactive (internal/procs)
	if o.Operators == "" {
		o.Operators = filepath.Join(filepath.Dir(configPath(f)), "operators.yaml")
	}
	// Checked before anything is read: a config or roster others could write would let them
	// name hooks or make themselves admin.
	paths := servePaths(f, o)
	if err := checkTrusted(paths); err != nil {
		journalRefusedStart(f, o, err)
		return err
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	a := f.App()
	db, err := a.State()
	if err != nil {
		return err
	}
	sup, err := a.Supervisor()
	if err != nil {
		return err
	}
	km, err := tui.Keys(cfg.Keys)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	base, err := a.LayerOptions(f.Identity())
	if err != nil {
		return err
	}
	// One watch and one timeline for the whole team, whoever is connected.
	w, err := a.Watcher(false)
	if err != nil {
		return err
	}
	stopTimeline := a.StartTimeline(ctx, f.ErrOut)
	defer stopTimeline()
	evals, _ := a.Evals() // nil when the config turns the linkage off
	var d *daemon.Daemon  // verify runs as a task of the daemon's layer, built by New
	run := verifyFor(f, func() *action.Layer { return d.Layer() }, db, cfg)
	d, err = daemon.New(daemon.Options{Supervisor: sup, State: db, Layer: base, OperatorsPath: o.Operators, Verify: run,
		NewLayer: func(lo action.Options) (*action.Layer, error) { return a.NewLayer(sup, lo) },
		Watch:    w, Evals: evals, ActionRate: rate.Limit(o.Rate), ActionBurst: 5, Keys: km, Theme: cfg.Theme,
		Trusted: func() error { return checkTrusted(paths) }})
	if err != nil {
		return err
	}
	warnInterrupted(f, d.Layer())
	releaseLoadMemory(ctx, sup)
	stateDir := filepath.Dir(f.statePath())
	ssh, err := sshd.New(d, sshd.Options{Addr: o.Listen, HostKeyPath: hostKeyPath(stateDir),
		MaxSessions: o.MaxSessions, IdleTimeout: o.Idle, FPS: o.FPS})
	if err != nil {
		return err
	}
	sl, err := ssh.Listen()
	if err != nil {
		return err
	}
	sockPath := socketPath(f.statePath())
	ul, err := sockapi.Listen(sockPath)
	if err != nil {
		sl.Close()
		return err
	}
	defer os.Remove(sockPath)
	api := sockapi.New(d, servedRunner(a, d), sockapi.AttachOptions{FPS: o.FPS})
	api.SetLimits(sockapi.Limits{PerUID: cfg.Serve.SocketRunsPerUID, Total: cfg.Serve.SocketRuns})
	fmt.Fprintf(f.ErrOut, "rangekeeper serve: ssh on %s, host key %s\n", sl.Addr(), ssh.HostKeyFingerprint())
	fmt.Fprintf(f.ErrOut, "rangekeeper serve: socket %s (owner only); operators %s (%d)\n", sockPath, o.Operators, len(d.Operators().Operators))
	errs := make(chan error, 2)
	go func() { errs <- ssh.Serve(sl) }()
	go func() { errs <- api.Serve(ul) }()

	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sig)
	for {
		select {
		case err := <-errs:
			if err != nil {
				return err
			}
		case s := <-sig:
			if s == syscall.SIGHUP {
				n, err := d.Reload()
				if err != nil {
					fmt.Fprintln(f.ErrOut, "rangekeeper serve:", err)
					continue
				}
				fmt.Fprintf(f.ErrOut, "rangekeeper serve: operators reloaded (%d); %d session(s) ended\n", len(d.Operators().Operators), n)
				continue
			}
			return stopServe(f, d, ssh, api, sl, sup, db, o.Grace)
		case <-ctx.Done():
			return stopServe(f, d, ssh, api, sl, sup, db, o.Grace)
		}
	}
}

// journalRefusedStart journals a start refused by the trust check, when the state directory
// itself passed it (a state file others could replace is not written to).
func journalRefusedStart(f *factory, o *serveOptions, err error) {
	if strictmodes.Check(filepath.Dir(f.statePath())) != nil {
		return
	}
	db, derr := f.State()
	if derr != nil {
		return
	}
	db.Append(state.Entry{Operator: state.Operator(), Action: daemon.ActionLoadOperators, Target: o.Operators,
		Phase: state.PhaseOutcome, Outcome: state.OutcomeRefused, Error: err.Error(), Params: map[string]string{"when": "start"}})
}

// stopServe stops accepting first (the SSH listener closes; the daemon's Shutdown begins by
// refusing new sessions and actions), lets running actions finish within grace while the open
// sessions still show them (the rest are interrupted and journaled so), then ends the sessions
// and saves the inventory cache. The socket stays open until then: a command sent meanwhile is told the daemon is
// stopping (ls and journal still answer) rather than finding no daemon and acting standalone.
func stopServe(f *factory, d *daemon.Daemon, ssh *sshd.Server, api *sockapi.Server, sshListener net.Listener, sup *supervisor.Supervisor, db *state.DB, grace time.Duration) error {
	fmt.Fprintf(f.ErrOut, "rangekeeper serve: stopping; %d action(s) running\n", d.Running())
	sshListener.Close()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	d.Shutdown(ctx)
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	ssh.Shutdown(sctx)
	api.Shutdown(sctx)
	return newInventorySaver(db, sup).Save()
}

// servedRunner runs a client's command line inside the daemon: the same commands, over the
// daemon's layer (its locks, roles and journal), acting for the client.
func servedRunner(a *app.App, d *daemon.Daemon) sockapi.Runner {
	return func(ctx context.Context, who action.Identity, args []string, stdout, stderr io.Writer) int {
		if len(args) == 0 || !remoteCommands[commandOf(args)] {
			fmt.Fprintf(stderr, "rangekeeper: the daemon runs only %s through its socket\n", strings.Join(sortedKeys(remoteCommands), ", "))
			return 2
		}
		if why := unservedFlag(args); why != "" {
			fmt.Fprintln(stderr, "rangekeeper:", why)
			return 2
		}
		ff := newFactory(strings.NewReader(""), stdout, stderr)
		ff.served = &served{app: a, layer: d.Layer(), who: who}
		root := newRootCmd(ff)
		root.SetArgs(args)
		root.SetOut(stdout)
		root.SetErr(stderr)
		err := root.ExecuteContext(action.WithIdentity(ctx, who))
		ff.closeAll()
		return exitStatus(err, stderr)
	}
}

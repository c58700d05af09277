package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/rangekeeper/rangekeeper/app"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/tui"
)

// factory hands commands their dependencies: the terminal, the global flags and the process's
// assembly (package app), built lazily, so a command that needs no state file never opens (or
// locks) one. Tests build their own factory with fakes behind the same fields.
type factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// Global flags.
	StatePath  string
	ConfigPath string
	ReadOnly   bool
	All        bool

	stdinTTY, stdoutTTY bool

	// Environ is the process environment (os.Environ); tests give their own.
	Environ func() []string

	closers []func()

	appOnce sync.Once
	app     *app.App

	extraBackends []backends.Backend // e.g. the demo's simulated ranges
	onlyBackend   string             // a kind or name: only those are built (ls --backend)
	// supervisorAfter, when set before the supervisor is built, holds back the backends' first
	// lists until it closes (the workbench: until the inventory cache is read).
	supervisorAfter <-chan struct{}

	// served: this factory runs a command line inside `rangekeeper serve` (serve.go), over the
	// daemon's state file, supervisor and action layer, for the socket's client.
	served     *served
	Standalone bool // --standalone: never a client of a running daemon
}

func newFactory(in io.Reader, out, errOut io.Writer) *factory {
	f := &factory{In: in, Out: out, ErrOut: errOut, Environ: os.Environ}
	if fi, ok := in.(*os.File); ok {
		f.stdinTTY = term.IsTerminal(int(fi.Fd()))
	}
	if fo, ok := out.(*os.File); ok {
		f.stdoutTTY = term.IsTerminal(int(fo.Fd()))
	}
	return f
}

// IsTerminal reports whether both stdin and stdout are terminals (prompts need both).
func (f *factory) IsTerminal() bool { return f.stdinTTY && f.stdoutTTY }

// StdoutTTY reports whether stdout is a terminal (for colour).
func (f *factory) StdoutTTY() bool { return f.stdoutTTY }

// App is this process's assembly (package app), built at the first use from the global flags;
// inside the daemon it is the daemon's own.
func (f *factory) App() *app.App {
	if f.served != nil {
		return f.served.app
	}
	f.appOnce.Do(func() {
		f.app = app.New(app.Options{ConfigPath: f.ConfigPath, StatePath: f.StatePath, ReadOnly: f.ReadOnly, All: f.All,
			Only: f.onlyBackend, Extra: f.extraBackends, ErrOut: f.ErrOut, CheckConfig: checkKeys})
		f.onClose(f.app.Close)
	})
	return f.app
}

// Config loads the config file once.
func (f *factory) Config() (*config.Config, error) { return f.App().Config() }

// State opens the state file once; it is closed when the command ends.
func (f *factory) State() (*state.DB, error) { return f.App().State() }

func (f *factory) statePath() string {
	if f.StatePath != "" {
		return f.StatePath
	}
	return state.DefaultPath()
}

func (f *factory) onClose(fn func()) { f.closers = append(f.closers, fn) }

func (f *factory) closeAll() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
	f.closers = nil
}

// commandRegistry lets each command live in its own file and register itself, so commands are
// added without editing a central list.
var commandRegistry []func(*factory) *cobra.Command

func registerCommand(fn func(*factory) *cobra.Command) { commandRegistry = append(commandRegistry, fn) }

// checkKeys refuses, at load, a key binding the workbench does not know (or one it cannot take),
// naming the file and line, so a typo is caught by every command and not only when the TUI starts.
func checkKeys(cfg *config.Config) error {
	if len(cfg.Keys) == 0 {
		return nil
	}
	_, err := tui.Keys(cfg.Keys)
	if err == nil {
		return nil
	}
	names := make([]string, 0, len(cfg.Keys))
	for n := range cfg.Keys {
		names = append(names, n)
	}
	sort.Strings(names)
	at := cfg.At("keys")
	for _, n := range names {
		if strings.Contains(err.Error(), strconv.Quote(n)) {
			at = cfg.At("keys." + n)
			break
		}
	}
	return fmt.Errorf("config %s: %w", at, err)
}

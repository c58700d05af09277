package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/internal/procs"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/tui"
)

// runTUI opens the interactive workbench.
func runTUI(ctx context.Context, f *factory) error {
	procs.ForInteractive() // keys stay quick while a large fleet loads (internal/procs)
	m, save, err := newWorkbench(f)
	if err != nil {
		return err
	}
	stopRecording := f.App().StartTimeline(ctx, f.ErrOut) // the timeline records while the workbench runs
	if sup, err := f.Supervisor(); err == nil {
		releaseLoadMemory(ctx, sup)
	}
	ctx, hangUp := context.WithCancelCause(ctx)
	defer hangUp(nil)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(tui.FPS), tui.InputFirst()}
	if in, ok := f.In.(*os.File); ok && f.stdinTTY {
		opts = append(opts, tea.WithInput(terminalInput{File: in, gone: func() { hangUp(errTerminalGone) }}))
	}
	_, err = tea.NewProgram(m, opts...).Run()
	if errors.Is(context.Cause(ctx), errTerminalGone) {
		err = nil // nobody is left to tell; the cache is saved below as on q
	}
	stopRecording()
	if serr := save(); serr != nil && err == nil {
		err = serr
	}
	return err
}

// newWorkbench wires the workbench model over this process's backends, state file and action
// layer. The state file is opened by the program in a command after its first frame (another
// process may hold its lock for a moment; the cache may be large): save waits for that opening,
// then writes the inventory cache (run it when the program ends).
func newWorkbench(f *factory) (m *tui.Model, save func() error, err error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	km, err := tui.Keys(cfg.Keys)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	// The state file is held only for each transaction, so opening it never waits for another
	// process; the inventory cache (megabytes at 10,000 sandboxes) is decoded after the first
	// frame, in the program's Open command.
	db, err := f.State()
	if err != nil {
		return nil, nil, err
	}
	// The cache is read from here on, beside the program's start, and the backends list only
	// once it is in: at a restart of a large range their first lists (10,000 pods) would take the
	// two cores the decode needs, and the cached rows came 150-400 ms after the first frame.
	cache, cacheRead := readInventory(db)
	f.supervisorAfter = cacheRead
	sup, err := f.Supervisor()
	if err != nil {
		return nil, nil, err
	}
	// The action layer resolves sandboxes from the live supervisor; no waiting before the UI opens.
	layer, err := f.layer(sup)
	if err != nil {
		return nil, nil, err
	}
	saver := newInventorySaver(db, sup)
	save = saver.Save
	w, err := f.Watcher() // the containment watch: alerts and quarantine marks
	if err != nil {
		return nil, nil, err
	}
	evals, _ := f.App().Evals() // nil when the config turns the linkage off
	openCache := func() (tui.Opened, error) {
		<-cacheRead
		return tui.Opened{State: db, Actions: layer, Inventory: *cache}, nil
	}
	m = tui.New(tui.Options{Supervisor: sup, Actions: layer, State: db, Open: openCache, Keys: km, Theme: cfg.Theme,
		ReadOnly: cfg.ReadOnly || f.ReadOnly, NoColor: os.Getenv("NO_COLOR") != "", SaveCache: save,
		Verify: workbenchVerify(f, layer, db, cfg), LogLines: cfg.Logs.RingLines, Watch: w, Evals: evals})
	return m, save, nil
}

// readInventory decodes the inventory cache on its own goroutine; the records are set before
// done closes (none when the cache cannot be read: the workbench then starts empty).
func readInventory(db *state.DB) (recs *[]state.InventoryRecord, done <-chan struct{}) {
	recs = new([]state.InventoryRecord)
	read := make(chan struct{})
	go func() {
		defer close(read)
		// Everything the decode allocates stays live (it is the cache), so a collection during it
		// is pure cost; in a just-started process, whose heap goal starts at 4 MB, the decode of
		// 10,000 cached sandboxes ran under several.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		if got, err := db.InventoryOutlines(); err == nil {
			*recs = got
		}
	}()
	return recs, read
}

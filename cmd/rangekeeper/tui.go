package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/tui"
)

// runTUI opens the interactive workbench.
func runTUI(ctx context.Context, f *factory) error {
	m, save, err := newWorkbench(f)
	if err != nil {
		return err
	}
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(tui.FPS)).Run()
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
	sup, err := f.Supervisor()
	if err != nil {
		return nil, nil, err
	}
	var (
		once  sync.Once
		saver *inventorySaver
		ready = make(chan struct{})
	)
	openState := func() (tui.Opened, error) {
		var o tui.Opened
		var err error
		once.Do(func() {
			defer close(ready)
			db, derr := f.State()
			if derr != nil {
				err = derr
				return
			}
			// The action layer resolves sandboxes from the live supervisor; no waiting for it.
			layer, lerr := f.layer(sup)
			if lerr != nil {
				err = lerr
				return
			}
			saver = newInventorySaver(db, sup)
			o = tui.Opened{State: db, Actions: layer}
			if recs, ierr := db.Inventory(); ierr == nil {
				o.Inventory = recs
			}
		})
		return o, err
	}
	save = func() error {
		// Opened by the program, or never asked for (it quit first): open now so the exit
		// save still runs, and so nothing is left opening while the factory closes.
		if _, err := openState(); err != nil {
			return nil // reported on the status line; there is nothing to save into
		}
		<-ready
		if saver == nil {
			return nil
		}
		return saver.Save()
	}
	m = tui.New(tui.Options{Supervisor: sup, Open: openState, Keys: km, Theme: cfg.Theme,
		ReadOnly: cfg.ReadOnly || f.ReadOnly, NoColor: os.Getenv("NO_COLOR") != "", SaveCache: save})
	return m, save, nil
}

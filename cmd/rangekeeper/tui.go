package main

import (
	"context"
	"fmt"
	"os"

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
// layer; save writes the inventory cache (run it when the program ends).
func newWorkbench(f *factory) (m *tui.Model, save func() error, err error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	km, err := tui.Keys(cfg.Keys)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	db, err := f.State()
	if err != nil {
		return nil, nil, err
	}
	sup, err := f.Supervisor()
	if err != nil {
		return nil, nil, err
	}
	// The action layer resolves sandboxes from the live supervisor; no waiting before the UI opens.
	layer, err := f.layer(sup)
	if err != nil {
		return nil, nil, err
	}
	save = newInventorySaver(db, sup).Save
	m = tui.New(tui.Options{Supervisor: sup, Actions: layer, State: db, Keys: km, Theme: cfg.Theme,
		ReadOnly: cfg.ReadOnly || f.ReadOnly, NoColor: os.Getenv("NO_COLOR") != "", SaveCache: save})
	if recs, err := db.Inventory(); err == nil {
		m.LoadCache(recs)
	}
	return m, save, nil
}

package main

import (
	"context"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/tui"
	"github.com/rangekeeper/rangekeeper/tui/keys"
)

// runTUI opens the interactive workbench.
func runTUI(ctx context.Context, f *factory) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	km := keys.Default()
	if len(cfg.Keys) > 0 {
		if km, err = km.Remap(cfg.Keys); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	db, err := f.State()
	if err != nil {
		return err
	}
	sup, err := f.Supervisor()
	if err != nil {
		return err
	}
	// The action layer resolves sandboxes from the live supervisor; no waiting before the UI opens.
	layer := action.New(sup, db, cfg.ReadOnly || f.ReadOnly)
	m := tui.New(tui.Options{Supervisor: sup, Actions: layer, State: db, Keys: km, Theme: cfg.Theme,
		ReadOnly: cfg.ReadOnly || f.ReadOnly, NoColor: os.Getenv("NO_COLOR") != ""})
	if recs, err := db.Inventory(); err == nil {
		m.LoadCache(recs)
	}
	_, err = tea.NewProgram(m, tea.WithContext(ctx)).Run()
	if serr := saveInventory(db, sup); serr != nil && err == nil {
		err = serr
	}
	return err
}

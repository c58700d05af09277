package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/state"
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
	attachStore(sup, db) // backends that keep snapshot records need the state file
	// The action layer resolves sandboxes from the live supervisor; no waiting before the UI opens.
	layer := action.New(sup, db, cfg.ReadOnly || f.ReadOnly)
	m := tui.New(tui.Options{Supervisor: sup, Actions: layer, State: db, Keys: km, Theme: cfg.Theme,
		ReadOnly: cfg.ReadOnly || f.ReadOnly, NoColor: os.Getenv("NO_COLOR") != "",
		Probe: tuiProbe(cfg, db), SaveCache: func() error { return saveInventory(db, sup) }})
	if recs, err := db.Inventory(); err == nil {
		m.LoadCache(recs)
	}
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(tui.FPS)).Run()
	if serr := saveInventory(db, sup); serr != nil && err == nil {
		err = serr
	}
	return err
}

// tuiProbe runs the escape probe the way `rangekeeper probe` does and keeps its history; nil when
// the probe binary is unavailable (the TUI then shows the key disabled).
func tuiProbe(cfg *config.Config, db *state.DB) tui.ProbeFunc {
	bin, _, err := probe.Binary()
	if err != nil {
		return nil
	}
	targets := probe.TargetsFrom(cfg.Probe)
	return func(ctx context.Context, b backends.Backend, sb backends.Sandbox) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		ex, _ := b.(backends.Executor)
		cp, _ := b.(backends.Copier)
		res, err := probe.RunWith(ctx, ex, cp, sb.ID, "", bin, targets, probe.Options{})
		if err != nil {
			return "", err
		}
		rep := probe.Assess(res, sb.Findings, nil, hostVersions(ctx, b, verdict.Versions{}))
		if err := probe.Save(db, rep); err != nil {
			return "", err
		}
		if !rep.Probed() {
			return "", errors.New(res.CouldNotProbe)
		}
		return rep.Summary(), nil
	}
}

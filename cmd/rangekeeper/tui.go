package main

import (
	"context"
	"errors"
)

// runTUI opens the interactive workbench.
func runTUI(ctx context.Context, f *factory) error {
	return errors.New("TUI not wired yet")
}

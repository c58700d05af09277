package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// runDemo measures each tool as `rangekeeper demo --fleet N` for every size N: the demo's
// Docker range on this machine's engine plus N SIMULATED Kubernetes releases (one sandbox each)
// churning one every 2 s; no control plane. Every start rebuilds the demo range (as `demo`
// does), so the full-table time includes that; the range is removed at the end.
func (b *bench) runDemo(ctx context.Context, tools []*tool, sizes []int, runs int) error {
	b.spec = &fleetSpec{perRel: 1}
	demo := func(args ...string) error {
		home, err := os.MkdirTemp(b.work, "demo-range-")
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, tools[0].bin, append([]string{"--state", filepath.Join(home, "state.db"), "demo"}, args...)...)
		cmd.Env = append(os.Environ(), isolatedEnv(home, filepath.Join(home, "no-kubeconfig"))...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("rangekeeper demo %v: %v: %s", args, err, firstLines(string(out), 20))
		}
		return nil
	}
	defer func() {
		if err := demo("--down"); err != nil {
			b.logf("%v", err)
		}
	}()
	var all []result
	for _, n := range sizes {
		b.demoFleet = n
		all = append(all, b.round(ctx, tools, n, runs, "demo, ")...)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep := report(all, sizes, tools, b)
	fmt.Print(rep)
	return os.WriteFile(filepath.Join(b.out, "report.txt"), []byte(rep), 0o644)
}

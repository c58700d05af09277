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
	defer b.demoDown(tools[0].bin)
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

// demoDown removes the demo range (`rangekeeper demo --down`), logging a failure. It runs after
// an interrupt too, so it does not take the bench's context.
func (b *bench) demoDown(bin string) {
	home, err := os.MkdirTemp(b.work, "demo-down-")
	if err != nil {
		b.logf("demo --down: %v", err)
		return
	}
	cmd := exec.Command(bin, "--state", filepath.Join(home, "state.db"), "demo", "--down")
	cmd.Env = append(os.Environ(), isolatedEnv(home, filepath.Join(home, "no-kubeconfig"))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.logf("rangekeeper demo --down: %v: %s", err, firstLines(string(out), 20))
	}
}

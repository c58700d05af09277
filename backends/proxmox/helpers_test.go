package proxmox

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startDemo runs the demo range on loopback and a backend connected to it.
func startDemo(t *testing.T, opts pvesim.Options) (*pvesim.Server, *Backend) {
	t.Helper()
	if opts.TaskDelay == 0 {
		opts.TaskDelay = 5 * time.Millisecond
	}
	sim, err := pvesim.StartDemo(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	b, err := NewSimulated("lab", sim)
	if err != nil {
		t.Fatal(err)
	}
	b.cacheTTL = 0 // tests change the simulator out of band: always refetch
	b.SetTaskTimeout(10 * time.Second)
	return sim, b
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func findSandbox(t *testing.T, sbs []backends.Sandbox, id string) backends.Sandbox {
	t.Helper()
	for _, s := range sbs {
		if s.ID == id {
			return s
		}
	}
	var ids []string
	for _, s := range sbs {
		ids = append(ids, s.ID)
	}
	t.Fatalf("sandbox %s not found in %v", id, ids)
	return backends.Sandbox{}
}

func backendsExec(cmd ...string) backends.ExecRequest { return backends.ExecRequest{Cmd: cmd} }

package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// releaseFindings are shaped like the Kubernetes backend's posture findings for one agent-env
// release with two services: per pod, eight rules on each of two containers plus one on the pod.
func releaseFindings(release string) []sandbox.Finding {
	var fs []sandbox.Finding
	for _, svc := range []string{"default", "victim"} {
		pod := "agent-env-" + release + "-" + svc + "-0"
		fs = append(fs, sandbox.Finding{RuleID: "K8S-T06", Severity: catalog.SeverityLow, Axis: catalog.AxisNetwork, Member: pod,
			Message: "service links inject every Service's address into the environment", Evidence: "spec.enableServiceLinks not false"})
		for _, c := range []string{svc, "coredns"} {
			for _, rule := range []string{"K8S-H05", "K8S-H06", "K8S-H07", "K8S-H08", "K8S-H17", "K8S-R01", "K8S-R02", "K8S-T05"} {
				fs = append(fs, sandbox.Finding{RuleID: rule, Severity: catalog.SeverityMedium, Axis: catalog.AxisHost, Member: pod,
					Message: "a hardening setting is missing", Evidence: "containers[" + c + "].securityContext"})
			}
		}
	}
	return fs
}

// BenchmarkWorkbenchWiring10k is what runs before the program can draw its first frame
// (newWorkbench: config, state file, supervisor, action layer, containment watch) on the state
// file a restart of a 10,000-sandbox range finds: 10,000 cached sandboxes and their 10,000
// baselines. The watch once read every baseline here, on the main goroutine (0.6–0.9 s before
// the first frame at 10,000 Kubernetes sandboxes); they are now read at its first step, after
// the backends' first lists. Only newWorkbench is timed.
func BenchmarkWorkbenchWiring10k(b *testing.B) {
	const n = 10_000
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	statePath := filepath.Join(dir, "state.db")
	sim := simfleet.New("simulated", backends.KindKubernetes, n, time.Hour)
	seed, err := state.Open(statePath)
	if err != nil {
		b.Fatal(err)
	}
	sbs := make([]backends.Sandbox, n)
	bls := make([]state.Baseline, n)
	for i := range sbs {
		sbs[i] = sim.Sandbox(i, 0)
		bls[i] = state.Baseline{SandboxID: sbs[i].ID, Recorded: time.Now(), Reason: "first seen", Findings: releaseFindings(sbs[i].Name)}
	}
	if err := seed.SaveInventory(state.InventoryRecord{Backend: sim.Name(), Sandboxes: sbs}); err != nil {
		b.Fatal(err)
	}
	if err := seed.PutBaselines(bls); err != nil {
		b.Fatal(err)
	}
	if got, err := seed.Baselines(); err != nil || len(got) != n {
		b.Fatalf("seeded %d baselines (%v)", len(got), err)
	}
	seed.Close()
	b.ResetTimer()
	for range b.N {
		f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
		f.StatePath, f.ConfigPath = statePath, cfg
		f.extraBackends = []backends.Backend{simfleet.New("simulated", backends.KindKubernetes, n, time.Hour)}
		if _, _, err := newWorkbench(f); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.closeAll()
		b.StartTimer()
	}
}

package state

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// k8sSandbox is shaped like what the Kubernetes backend makes of one agent-env release with two
// services: two members, the release's labels, five detail facts, and the per-container posture
// findings the default chart values produce (about a dozen per container, two containers a pod).
func k8sSandbox(i int) sandbox.Sandbox {
	rel := fmt.Sprintf("rk%06d", i)
	created := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	sb := sandbox.Sandbox{
		ID: "k8s:envtest/inspect/" + rel, Name: rel, Backend: sandbox.KindKubernetes, Endpoint: "k8s:envtest",
		Status: sandbox.StatusRunning, Created: created, Task: "bench_fleet", Sample: rel, Inspect: true, Actionable: true,
		Labels: map[string]string{
			"app.kubernetes.io/instance": rel, "app.kubernetes.io/name": "agent-env", "app.kubernetes.io/managed-by": "Helm",
			"app.kubernetes.io/version": "0.14.0", "helm.sh/chart": "agent-env-0.14.0", "inspectSampleUUID": rel,
		},
		Extra: []sandbox.KeyValue{{Key: "namespace", Value: "inspect"}, {Key: "context", Value: "envtest"},
			{Key: "helm revision", Value: "1"}, {Key: "helm status", Value: "deployed"}},
	}
	for _, svc := range []string{"default", "victim"} {
		pod := "agent-env-" + rel + "-" + svc + "-0"
		sb.Members = append(sb.Members, sandbox.Member{ID: fmt.Sprintf("6f1c%04x-2a7d-4b7e-9b1a-%012x", i&0xffff, i), Name: pod, Service: svc,
			State: "Running", Running: true, Image: "python:3.12-bookworm", Created: created})
		sb.Findings = append(sb.Findings,
			sandbox.Finding{RuleID: "K8S-T06", Severity: catalog.SeverityLow, Axis: catalog.AxisNetwork, Member: pod, Message: "service links inject every Service's address into the environment", Evidence: "spec.enableServiceLinks not false"})
		for _, c := range []string{svc, "coredns"} {
			at := func(f string) string { return "containers[" + c + "]." + f }
			for _, f := range []struct{ id, msg, ev string }{
				{"K8S-H05", "capabilities are not dropped to nothing (drop ALL, add at most NET_BIND_SERVICE)", at("securityContext.capabilities")},
				{"K8S-H07", "runAsNonRoot is not true: the container may run as root", at("securityContext.runAsNonRoot")},
				{"K8S-H06", "allowPrivilegeEscalation is not false", at("securityContext.allowPrivilegeEscalation")},
				{"K8S-H08", "no seccomp profile set", at("securityContext.seccompProfile")},
				{"K8S-H17", "root filesystem is writable", at("securityContext.readOnlyRootFilesystem")},
				{"K8S-R01", "no memory limit", at("resources.limits.memory")},
				{"K8S-R02", "no CPU limit", at("resources.limits.cpu")},
				{"K8S-T05", "image is not pinned by digest", at("image=python:3.12-bookworm")},
			} {
				sb.Findings = append(sb.Findings, sandbox.Finding{RuleID: f.id, Severity: catalog.SeverityMedium, Axis: catalog.AxisHost, Member: pod, Message: f.msg, Evidence: f.ev})
			}
		}
	}
	return sb
}

func k8sFleet(n int) []sandbox.Sandbox {
	out := make([]sandbox.Sandbox, n)
	for i := range out {
		out[i] = k8sSandbox(i)
	}
	return out
}

// BenchmarkInventoryLoad10k measures what the first frame waits for on the state side: reading
// a cached fleet of 10,000 Kubernetes sandboxes back from the state file, whole ("full",
// Inventory) and with the findings left encoded ("outlines", InventoryOutlines: what the
// workbench reads at a start; the bytes allocated are what a new process must fault in).
func BenchmarkInventoryLoad10k(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.SaveInventory(InventoryRecord{Backend: "k8s:envtest", Saved: time.Now(), Sandboxes: k8sFleet(10_000)}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func() ([]InventoryRecord, error)
	}{{"full", db.Inventory}, {"outlines", db.InventoryOutlines}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				recs, err := c.read()
				if err != nil || len(recs) != 1 || len(recs[0].Sandboxes) != 10_000 {
					b.Fatalf("%d records, %v", len(recs), err)
				}
			}
		})
	}
}

// reportCPU adds the process CPU time per operation (cpu-ms/op): on a machine shared with
// other work it is a steadier figure than the wall time. Use: defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64((cpu()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op") }
}

// BenchmarkInventorySave10k measures the periodic cache write of 10,000 Kubernetes sandboxes.
func BenchmarkInventorySave10k(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rec := InventoryRecord{Backend: "k8s:envtest", Saved: time.Now(), Sandboxes: k8sFleet(10_000)}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if err := db.SaveInventory(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInventorySaveChanged2500 measures a save that does write: 2,500 Kubernetes sandboxes
// (the 5,000-pod fleet), one of them changed each time. Its garbage sets the GC's pace after a
// fleet has loaded (RSS after the table is full), so B/op is the figure to watch.
func BenchmarkInventorySaveChanged2500(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	fleet := k8sFleet(2_500)
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		fleet[i%len(fleet)].Status = []sandbox.Status{sandbox.StatusRunning, sandbox.StatusStopped}[i%2]
		i++
		if err := db.SaveInventory(InventoryRecord{Backend: "k8s:envtest", Saved: time.Now(), Sandboxes: fleet}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInventorySaveGrowing2500 is the first three saves of a 2,500-sandbox fleet into a new
// state file, which grows the file: without room to grow in the mapping, bbolt remaps inside the
// write transaction and copies what it had loaded (B/op 17.1 → 14.7 MB with the room).
func BenchmarkInventorySaveGrowing2500(b *testing.B) {
	fleet := k8sFleet(2_500)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		db, err := Open(filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; i < 3; i++ {
			fleet[i].Name += "x"
			if err := db.SaveInventory(InventoryRecord{Backend: "k8s:envtest", Saved: time.Now(), Sandboxes: fleet}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkOpenAndLoad10k is the whole state side of the first frame from the cache: open the
// state file (bbolt open, schema check) and read a cached fleet of 10,000 Kubernetes sandboxes
// as the workbench does (InventoryOutlines).
func BenchmarkOpenAndLoad10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	db, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.SaveInventory(InventoryRecord{Backend: "k8s:envtest", Saved: time.Now(), Sandboxes: k8sFleet(10_000)}); err != nil {
		b.Fatal(err)
	}
	db.Close()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		db, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		recs, err := db.InventoryOutlines()
		if err != nil || len(recs[0].Sandboxes) != 10_000 {
			b.Fatalf("InventoryOutlines = %d records, %v", len(recs), err)
		}
		db.Close()
	}
}

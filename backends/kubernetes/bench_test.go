package kubernetes

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// BenchmarkWatch5000Pods measures the time from Watch's start to the first complete table
// (EventReset) with 5,000 Running pods (2,500 two-member releases) in the API server, and the
// heap the informer caches hold. Run with:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench Watch5000 -benchtime 3x ./backends/kubernetes/
func BenchmarkWatch5000Pods(b *testing.B) { benchWatch(b, false) }

// BenchmarkWatch5000PodsWithPolicies is the same fleet with each release's CiliumNetworkPolicy
// (the chart's, as JSON through the dynamic client): first-table-ms is when the table appears
// (with the posture pending if the policies are still listing), complete-ms when the posture is
// complete.
func BenchmarkWatch5000PodsWithPolicies(b *testing.B) { benchWatch(b, true) }

func benchWatch(b *testing.B, policies bool) {
	const releases, perRelease = 2500, 2
	c := kubetest.Need(b)
	ns := c.Namespace(b)
	bk := testBackend(b, c, nil, ns)
	if policies {
		createPolicies(b, c, bk, ns, releases)
	}
	createPods(b, c, ns, releases, perRelease)

	// The heap is measured against one baseline taken before any watch: the informers of one
	// iteration wind down asynchronously after Watch returns and would blur a per-iteration
	// baseline.
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var heap uint64
	var first, complete time.Duration
	pendingFirst := 0
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		type table struct {
			members int
			pending bool
		}
		got := make(chan table, 2)
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			done <- bk.Watch(ctx, func(e backends.Event) {
				if e.Type == backends.EventReset {
					t := table{}
					for _, sb := range e.Sandboxes {
						t.members += len(sb.Members)
						t.pending = t.pending || sb.PosturePending != ""
					}
					got <- t
				}
			})
		}()
		t := <-got
		first += time.Since(start)
		if t.pending {
			pendingFirst++
			if t2 := <-got; t2.pending {
				b.Fatal("the second table's posture is still pending")
			}
		}
		complete += time.Since(start)
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if after.HeapAlloc > before.HeapAlloc {
			heap = max(heap, after.HeapAlloc-before.HeapAlloc)
		}
		cancel()
		<-done
		if t.members != releases*perRelease {
			b.Fatalf("the first table holds %d members, want %d", t.members, releases*perRelease)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(releases*perRelease, "pods")
	if policies {
		b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-table-ms")
		b.ReportMetric(float64(complete.Milliseconds())/float64(b.N), "complete-ms")
		b.ReportMetric(float64(pendingFirst)/float64(b.N), "pending-first")
	}
}

// createPolicies installs one real agent-env release and stamps its CiliumNetworkPolicies out
// for n releases named as createPods names them (the release's StatefulSets and pods are
// deleted, so only the stamped fleet is listed).
func createPolicies(b *testing.B, c *kubetest.Cluster, bk *Backend, ns string, n int) {
	b.Helper()
	ctx := context.Background()
	tmpl := release{name: newReleaseName(), task: "bench", sample: "bench"}
	install(b, bk, ns, tmpl)
	sel := metav1.ListOptions{LabelSelector: LabelInstance + "=" + tmpl.name}
	bg := metav1.DeletePropagationBackground
	if err := c.Client.AppsV1().StatefulSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, sel); err != nil {
		b.Fatal(err)
	}
	if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, sel); err != nil {
		b.Fatal(err)
	}
	list, err := bk.dyn.Resource(ciliumGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		b.Fatalf("the template release's policies: %v (%d)", err, len(list.Items))
	}
	var raws [][]byte
	for _, pol := range list.Items {
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields"} {
			unstructured.RemoveNestedField(pol.Object, "metadata", f)
		}
		raw, err := json.Marshal(pol.Object)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	// The template's own policies stay: its release has no pods, so no sandbox.
	parallel(b, n*len(raws), func(i int) error {
		var u unstructured.Unstructured
		raw := raws[i%len(raws)]
		if err := json.Unmarshal(bytes.ReplaceAll(raw, []byte(tmpl.name), fmt.Appendf(nil, "bench%05d", i/len(raws))), &u.Object); err != nil {
			return err
		}
		_, err := bk.dyn.Resource(ciliumGVR).Namespace(ns).Create(ctx, &u, metav1.CreateOptions{})
		return err
	})
}

// parallel runs do(0..n-1) on 16 workers and fails the benchmark on the first error.
func parallel(b *testing.B, n int, do func(int) error) {
	b.Helper()
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := do(i); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

// createPods makes bare pods bound to the kwok node (no scheduler round trip) with Inspect's
// labels, then waits until kwok reports them all Running.
func createPods(b *testing.B, c *kubetest.Cluster, ns string, releases, perRelease int) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	parallel(b, releases*perRelease, func(i int) error {
		rel := fmt.Sprintf("bench%05d", i/perRelease)
		svc := fmt.Sprintf("svc%d", i%perRelease)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("agent-env-%s-%s-0", rel, svc),
				Labels:      map[string]string{LabelInstance: rel, LabelService: svc, LabelSample: rel, "dev.rangekeeper.test": "1"},
				Annotations: map[string]string{AnnotationTask: "bench"}},
			Spec: corev1.PodSpec{NodeName: kubetest.NodeName, TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: svc, Image: "python:3.12-bookworm"}}},
		}
		_, err := c.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running", ResourceVersion: "0"})
		return err == nil && len(l.Items) == releases*perRelease, nil
	})
	if err != nil {
		b.Fatalf("pods never all Running: %v", err)
	}
	b.Logf("created %d pods and saw them Running in %s", releases*perRelease, time.Since(start).Round(time.Second))
}

// BenchmarkHealthPing measures one heartbeat (GET /version over the backend's connection): wall
// time, and the CPU it costs rangekeeper's process (the API server runs in another process).
// An idle cluster is pinged once per HealthInterval (10 s).
func BenchmarkHealthPing(b *testing.B) {
	c := kubetest.Need(b)
	bk := testBackend(b, c, nil, "default")
	ctx := context.Background()
	if err := bk.ping(ctx); err != nil {
		b.Fatal(err)
	}
	cpu0 := processCPU()
	b.ReportAllocs()
	for b.Loop() {
		if err := bk.ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time this process has used (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

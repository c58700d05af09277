package kubernetes

import (
	"context"
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
	"k8s.io/apimachinery/pkg/util/wait"
)

// BenchmarkWatch5000Pods measures the time from Watch's start to the first complete table
// (EventReset) with 5,000 Running pods (2,500 two-member releases) in the API server, and the
// heap the informer caches hold. Run with:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench Watch5000 -benchtime 3x ./backends/kubernetes/
func BenchmarkWatch5000Pods(b *testing.B) {
	const releases, perRelease = 2500, 2
	c := kubetest.Need(b)
	ns := c.Namespace(b)
	createPods(b, c, ns, releases, perRelease)
	bk := testBackend(b, c, nil, ns)

	// The heap is measured against one baseline taken before any watch: the informers of one
	// iteration wind down asynchronously after Watch returns and would blur a per-iteration
	// baseline.
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var heap uint64
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan int, 1)
		done := make(chan error, 1)
		go func() {
			done <- bk.Watch(ctx, func(e backends.Event) {
				if e.Type == backends.EventReset {
					n := 0
					for _, sb := range e.Sandboxes {
						n += len(sb.Members)
					}
					got <- n
				}
			})
		}()
		n := <-got
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if after.HeapAlloc > before.HeapAlloc {
			heap = max(heap, after.HeapAlloc-before.HeapAlloc)
		}
		cancel()
		<-done
		if n != releases*perRelease {
			b.Fatalf("the first table holds %d members, want %d", n, releases*perRelease)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(releases*perRelease, "pods")
}

// createPods makes bare pods bound to the kwok node (no scheduler round trip) with Inspect's
// labels, then waits until kwok reports them all Running.
func createPods(b *testing.B, c *kubetest.Cluster, ns string, releases, perRelease int) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				rel := fmt.Sprintf("bench%05d", i/perRelease)
				svc := fmt.Sprintf("svc%d", i%perRelease)
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("agent-env-%s-%s-0", rel, svc),
						Labels:      map[string]string{LabelInstance: rel, LabelService: svc, LabelSample: rel, "dev.rangekeeper.test": "1"},
						Annotations: map[string]string{AnnotationTask: "bench"}},
					Spec: corev1.PodSpec{NodeName: kubetest.NodeName, TerminationGracePeriodSeconds: new(int64),
						Containers: []corev1.Container{{Name: svc, Image: "python:3.12-bookworm"}}},
				}
				if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range releases * perRelease {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatalf("create pods: %v", firstErr)
	}
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

package kubernetes

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Pods whose security-relevant specs are equal (the releases of one task differ only in names)
// share one interned spec and one posture assessment; a different image is a different spec.
// The pod cache keeps what the table needs of the rest.
func TestPodCacheSharesSpecsAndPosture(t *testing.T) {
	specs := newSpecTable(PostureOptions{})
	pod := func(release, image string, phase corev1.PodPhase) *cachedPod {
		name := "agent-env-" + release + "-default-0"
		return specs.cache(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{LabelInstance: release, LabelService: "default"},
				Annotations: map[string]string{AnnotationTask: "t", "kubectl.kubernetes.io/last-applied-configuration": "{…}"}},
			Spec: corev1.PodSpec{Hostname: name, Containers: []corev1.Container{{Name: "default", Image: image,
				Env: []corev1.EnvVar{{Name: "RELEASE", Value: release}}}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{RestartCount: 2,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}},
		})
	}
	a, b := pod("r1", "python:3.12", corev1.PodRunning), pod("r2", "python:3.12", corev1.PodPending)
	if a.spec != b.spec {
		t.Fatal("two releases of one task got separate specs")
	}
	fa, fb := releasePosture([]*cachedPod{a}, nil, false), releasePosture([]*cachedPod{b}, nil, false)
	if len(fa) == 0 || fa[0].Member != a.Name || fb[0].Member != b.Name || &a.spec.posture()[0] != &b.spec.posture()[0] {
		t.Errorf("posture not shared or members not named: %+v / %+v", fa[0], fb[0])
	}
	if c := pod("r3", "python:latest", corev1.PodRunning); c.spec == a.spec {
		t.Error("a different image shared the spec")
	}
	if a.Annotations[AnnotationTask] != "t" || len(a.Annotations) != 1 || a.restarts != 2 || podState(a) != "CrashLoopBackOff" {
		t.Errorf("cached pod = annotations %v, restarts %d, state %q", a.Annotations, a.restarts, podState(a))
	}
}

// Events prove the API server alive: the heartbeat pings only when none arrived for a whole
// interval, and still ends the watch after two failed pings once they stop.
func TestHeartbeatPingsOnlyWhenNoEventArrived(t *testing.T) {
	// A server that refuses every connection: any ping fails at once.
	b, err := NewForConfig("dead", &rest.Config{Host: "https://127.0.0.1:1"}, Options{HealthInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	w := &watcher{b: b, cancel: cancel}
	// "An event has just arrived", at every tick however late the scheduler runs it: the
	// last event is stamped in the future while this phase lasts.
	w.heard.Store(time.Now().Add(time.Hour).UnixNano())
	go w.heartbeat(ctx)
	time.Sleep(300 * time.Millisecond) // ~15 ticks: no ping, no verdict
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("the watch was ended while events were arriving: %v", err)
	}
	w.heard.Store(0)
	select { // events stop: two failed pings end the watch
	case <-ctx.Done():
		if err := context.Cause(ctx); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("cause = %v; want the API server reported unreachable", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the heartbeat never ended the watch after events stopped")
	}
}

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

// The watcher assesses a pod's posture once per spec: status-only events (what kwok and
// kubelets send most) reuse the findings, a changed spec is assessed again, and the pods of a
// release that are gone are forgotten.
func TestWatcherRemembersPosturePerSpec(t *testing.T) {
	w := &watcher{posture: map[types.UID]podPosture{}, podsOf: map[string][]types.UID{}}
	pod := func(image string, phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-env-r-default-0", UID: "u1"},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "default", Image: image}}},
			Status: corev1.PodStatus{Phase: phase}}
		o, _ := slimPod(p)
		return o.(*corev1.Pod)
	}
	first := pod("python:3.12", corev1.PodPending)
	f1 := w.findingsOf(first)
	if len(f1) == 0 {
		t.Fatal("no findings for a default pod")
	}
	f2 := w.findingsOf(pod("python:3.12", corev1.PodRunning))
	if &f2[0] != &f1[0] {
		t.Error("a status-only change assessed the pod again instead of reusing its findings")
	}
	f3 := w.findingsOf(pod("python:latest", corev1.PodRunning))
	if &f3[0] == &f1[0] {
		t.Fatal("a changed image reused the old findings")
	}
	if formatFindings(f3) == formatFindings(f1) {
		t.Error("the findings of :latest equal those of a tagged image")
	}
	w.forgetPods("ns/r", []*corev1.Pod{first})
	w.forgetPods("ns/r", nil)
	if len(w.posture) != 0 || len(w.podsOf) != 0 {
		t.Errorf("after the release's pods are gone: %d remembered pods, %d releases", len(w.posture), len(w.podsOf))
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
	w.heard.Store(time.Now().UnixNano())
	go w.heartbeat(ctx)
	for range 15 { // events keep arriving for 300 ms: no ping, no verdict
		time.Sleep(20 * time.Millisecond)
		w.heard.Store(time.Now().UnixNano())
	}
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("the watch was ended while events were arriving: %v", err)
	}
	select { // events stop: two failed pings end the watch
	case <-ctx.Done():
		if err := context.Cause(ctx); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("cause = %v; want the API server reported unreachable", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the heartbeat never ended the watch after events stopped")
	}
}

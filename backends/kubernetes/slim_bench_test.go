package kubernetes

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// servedPod dresses a pod rendered from the agent-env chart the way the API server and a
// kubelet (kwok) return it: identity, managedFields, a Running status with conditions and
// per-container statuses.
func servedPod(p *corev1.Pod, i int) *corev1.Pod {
	p = p.DeepCopy()
	now := metav1.NewTime(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC))
	p.UID = types.UID(fmt.Sprintf("0b1c9f6e-3c1d-4f5e-9a7b-%012d", i))
	p.ResourceVersion = fmt.Sprint(100000 + i)
	p.CreationTimestamp = now
	p.Spec.NodeName = "kwok-node-0"
	p.Spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	fields := `{"f:metadata":{"f:annotations":{".":{},"f:inspectTaskName":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:inspect/service":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"default\"}":{".":{},"f:command":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:securityContext":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsConfig":{},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:hostname":{},"f:restartPolicy":{},"f:runtimeClassName":{},"f:schedulerName":{},"f:securityContext":{},"f:subdomain":{},"f:terminationGracePeriodSeconds":{}}}`
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)},
		{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields), Subresource: "status"}}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: fmt.Sprintf("10.244.%d.%d", i/250, i%250), StartTime: &now, QOSClass: corev1.PodQOSBestEffort}
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "docker-pullable://" + c.Image,
			ContainerID: "containerd://" + fmt.Sprintf("%064d", i), Ready: true, Started: new(bool),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	return p
}

// BenchmarkInformerCacheBytes measures what the informer caches hold per object of an agent-env
// release (two services): every object is decoded from its protobuf wire form as the informer
// does, passed through the transform, and kept. "full" is the former transform (managedFields
// dropped only), "slim" the current ones (podcache.go, policycache.go).
func BenchmarkInformerCacheBytes(b *testing.B) {
	pods, pols := renderAgentEnv(b, "lsphdyup", "evals", map[string]any{"services": map[string]any{
		"default": map[string]any{"image": "python:3.12-bookworm"}, "victim": map[string]any{"image": "python:3.12-bookworm"}}})
	var wire [][]byte
	for i, p := range pods {
		raw, err := servedPod(p, i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		wire = append(wire, raw)
	}
	polJSON, err := json.Marshal(pols[0].Object)
	if err != nil {
		b.Fatal(err)
	}
	const n = 5000
	for _, tc := range []struct {
		name     string
		pod, pol func(any) (any, error)
	}{
		{"full", dropManagedFields, dropManagedFields},
		{"slim", newSpecTable(PostureOptions{}).transform, newSpecTable(PostureOptions{}).cachePolicy},
	} {
		b.Run("pods/"+tc.name, func(b *testing.B) {
			b.ReportMetric(retained(b, n, func(i int) any {
				p := &corev1.Pod{}
				if err := p.Unmarshal(wire[i%len(wire)]); err != nil {
					b.Fatal(err)
				}
				o, _ := tc.pod(p)
				return o
			}), "B/object")
		})
		b.Run("policies/"+tc.name, func(b *testing.B) {
			b.ReportMetric(retained(b, n/2, func(int) any {
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(polJSON); err != nil {
					b.Fatal(err)
				}
				o, _ := tc.pol(u)
				return o
			}), "B/object")
		})
	}
}

// retained makes n objects with mk, keeps them all, and returns the heap they hold, per object.
func retained(b *testing.B, n int, mk func(i int) any) float64 {
	var per float64
	for b.Loop() {
		keep := make([]any, n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range keep {
			keep[i] = mk(i)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
		runtime.KeepAlive(keep)
	}
	return per
}

// BenchmarkPodTransform is the informer transform's own cost per pod (decode excluded): at
// 50,000 pods its garbage fed the collector whose assists took a core from the UI for 100 ms
// (an execution trace of the load).
func BenchmarkPodTransform(b *testing.B) {
	pods, _ := renderAgentEnv(b, "lsphdyup", "evals", map[string]any{"services": map[string]any{
		"default": map[string]any{"image": "python:3.12-bookworm"}, "victim": map[string]any{"image": "python:3.12-bookworm"}}})
	decoded := make([]*corev1.Pod, 1000)
	for i := range decoded {
		decoded[i] = servedPod(pods[i%len(pods)], i)
	}
	t := newSpecTable(PostureOptions{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := t.transform(decoded[i%len(decoded)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

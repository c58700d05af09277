package kubernetes

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods with the same label keys share one sorted key list; each keeps its own values; a lookup
// of a label the pod lacks is empty; the release's common labels leave out the per-member ones
// and any value the members disagree on.
func TestLabelSetsShareKeysAndKeepValues(t *testing.T) {
	specs := newSpecTable(PostureOptions{})
	pod := func(name string, labels map[string]string) *cachedPod {
		return specs.cache(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
	release := map[string]string{LabelInstance: "agent-env-a", "app.kubernetes.io/name": "agent-env", LabelSample: "7"}
	with := func(extra map[string]string) map[string]string {
		out := maps.Clone(release)
		maps.Copy(out, extra)
		return out
	}
	a := pod("a-default-0", with(map[string]string{LabelService: "default", "statefulset.kubernetes.io/pod-name": "a-default-0"}))
	b := pod("a-victim-0", with(map[string]string{LabelService: "victim", "statefulset.kubernetes.io/pod-name": "a-victim-0"}))
	c := pod("a-odd-0", with(map[string]string{LabelService: "odd", LabelSample: "8", "extra": "x"}))
	if &a.labels.keys[0] != &b.labels.keys[0] {
		t.Error("two pods with the same label keys keep two key lists")
	}
	if len(c.labels.keys) == len(a.labels.keys) && &c.labels.keys[0] == &a.labels.keys[0] {
		t.Error("a pod with other keys shares their list")
	}
	for p, want := range map[*cachedPod]map[string]string{
		a: {LabelService: "default", LabelInstance: "agent-env-a", "extra": ""},
		b: {LabelService: "victim", "statefulset.kubernetes.io/pod-name": "a-victim-0"},
		c: {LabelService: "odd", LabelSample: "8", "extra": "x", "statefulset.kubernetes.io/pod-name": ""},
	} {
		for k, v := range want {
			if got := p.labels.get(k); got != v {
				t.Errorf("%s: label %s = %q, want %q", p.Name, k, got, v)
			}
		}
	}
	got := commonLabels([]*cachedPod{a, b, c})
	want := map[string]string{LabelInstance: "agent-env-a", "app.kubernetes.io/name": "agent-env"}
	if !maps.Equal(got, want) {
		t.Errorf("common labels %v, want %v", got, want)
	}
	if m := memberOf(b); m.Service != "victim" {
		t.Errorf("member service %q", m.Service)
	}
	if keys, _ := releaseKeyOfPod(a); len(keys) != 1 || keys[0] != "/agent-env-a" {
		t.Errorf("release index key %v", keys)
	}
}

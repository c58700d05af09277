package kubernetes

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// A member pod's changes become timeline Activity: Pending → Running is a start, an
// OOM-killed container's restart is an OOM plus a restart with its reason and exit code, a new
// waiting reason is an event; unchanged pods and pods outside a release report nothing.
func TestPodActivity(t *testing.T) {
	id := func(ns, rel string) string { return "k8s:test/" + ns + "/" + rel }
	pod := func(phase corev1.PodPhase, restarts int, waiting, lastExit string) *cachedPod {
		return &cachedPod{slimMeta: slimMeta{Name: "agent-env-x-default-0", Namespace: "evals"},
			labels: labelSet{keys: []string{LabelInstance}, vals: []string{"agent-env-x"}}, phase: phase, restarts: restarts, waiting: waiting, lastExit: lastExit}
	}
	now := time.Now()
	kinds := func(as []sandbox.Activity) (out []string) {
		for _, a := range as {
			out = append(out, string(a.Kind))
			if a.SandboxID != "k8s:test/evals/agent-env-x" || a.Member != "agent-env-x-default-0" {
				t.Errorf("activity for %s/%s", a.SandboxID, a.Member)
			}
		}
		return out
	}
	cases := []struct {
		name     string
		old, cur *cachedPod
		want     []string
	}{
		{"started", pod(corev1.PodPending, 0, "", ""), pod(corev1.PodRunning, 0, "", ""), []string{"start"}},
		{"oom restart", pod(corev1.PodRunning, 0, "", ""), pod(corev1.PodRunning, 1, "", "OOMKilled 137"), []string{"oom", "restart"}},
		{"crash loop", pod(corev1.PodRunning, 1, "", "Error 1"), pod(corev1.PodRunning, 2, "CrashLoopBackOff", "Error 1"), []string{"restart", "event"}},
		{"failed", pod(corev1.PodRunning, 0, "", ""), pod(corev1.PodFailed, 0, "", ""), []string{"stop"}},
		{"unchanged", pod(corev1.PodRunning, 3, "", ""), pod(corev1.PodRunning, 3, "", ""), nil},
	}
	for _, tc := range cases {
		got := podActivity(id, tc.old, tc.cur, now)
		if g := kinds(got); len(g) != len(tc.want) || (len(g) > 0 && (g[0] != tc.want[0] || g[len(g)-1] != tc.want[len(tc.want)-1])) {
			t.Errorf("%s: kinds %v, want %v", tc.name, g, tc.want)
		}
		if tc.name == "oom restart" && (got[1].Attrs["reason"] != "OOMKilled" || got[1].Attrs["exit_code"] != "137") {
			t.Errorf("restart attrs %v", got[1].Attrs)
		}
	}
	outside := pod(corev1.PodPending, 0, "", "")
	outside.labels = labelSet{}
	if got := podActivity(id, outside, outside, now); got != nil {
		t.Errorf("a pod outside a release: %+v", got)
	}
}

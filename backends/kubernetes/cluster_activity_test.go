package kubernetes

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/timeline"
)

// TestClusterPodActivityReachesTimeline runs the backend under the real supervisor with the
// timeline recorder and a state file, and changes a member pod's status through the API the
// way a kubelet (here kwok's stages) does: a container OOM-killed and restarted, then waiting
// in CrashLoopBackOff; the pod sent back to Pending, then Running again; finally Failed. Each change reaches the supervisor's activity log
// and the recorded timeline of the sandbox, in order, with its reason and exit code; the
// StatefulSet controller's deletion of the failed pod is recorded as its destroy.
func TestClusterPodActivityReachesTimeline(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "t", sample: "x"}
	install(t, b, ns, r)
	sid := b.Name() + "/" + ns + "/" + r.name

	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	sup := supervisor.New([]backends.Backend{b}, supervisor.DefaultBackoff)
	rec := &timeline.Recorder{Sup: sup, DB: db, Heartbeat: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	recDone := make(chan error, 1)
	go func() { recDone <- rec.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-recDone; err != nil {
			t.Errorf("recorder: %v", err)
		}
		wait()
		db.Close()
	}()
	until(t, 90*time.Second, "the release running under the supervisor", func() bool {
		_, sb, ok := sup.Lookup(sid)
		return ok && allRunning(sb, 1)
	})
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: releaseSelector(r.name)})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods of the release: %v (%d)", err, len(pods.Items))
	}
	pod := pods.Items[0].Name
	setStatus := func(what string, change func(*corev1.PodStatus)) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := c.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(&p.Status)
			_, err = c.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	notReady := func(st *corev1.PodStatus) {
		for i := range st.Conditions {
			if st.Conditions[i].Type == corev1.PodReady || st.Conditions[i].Type == corev1.ContainersReady {
				st.Conditions[i].Status = corev1.ConditionFalse
			}
		}
	}
	// recorded waits until the timeline holds these "kind detail" entries for the pod, in order.
	recorded := func(what string, want ...string) {
		t.Helper()
		var got []string
		defer func() {
			if t.Failed() {
				p, _ := c.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
				t.Logf("timeline %q; pod phase %s conditions %+v statuses %+v", got, p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
			}
		}()
		until(t, 30*time.Second, what, func() bool {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			es, err := db.Timeline(state.TimelineQuery{SandboxID: sid})
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for _, e := range es {
				if e.Member == pod && e.Source != "" {
					got = append(got, e.Kind+" "+e.Detail)
				}
			}
			i := 0
			for _, g := range got {
				if i < len(want) && g == want[i] {
					i++
				}
			}
			return i == len(want)
		})
		t.Logf("timeline of %s: %q", pod, got)
	}

	setStatus("OOM kill and restart", func(st *corev1.PodStatus) {
		notReady(st)
		for i := range st.ContainerStatuses {
			if cs := &st.ContainerStatuses[i]; cs.Name == "default" {
				cs.RestartCount, cs.Ready = 1, false
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			}
		}
	})
	recorded("the OOM kill, restart and back-off",
		"oom killed: out of memory", "restart restarted after OOMKilled, exit code 137 (1 restarts)", "event waiting: CrashLoopBackOff")

	// kwok (v0.8.0) does not re-run its pod-ready stage for a pod another writer sent back to
	// Pending, so the test plays the kubelet for the way back to Running too.
	setStatus("back to Pending", func(st *corev1.PodStatus) { notReady(st); st.Phase = corev1.PodPending })
	recorded("Pending", "event phase Running → Pending")
	setStatus("running again", func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		for i := range st.ContainerStatuses {
			if cs := &st.ContainerStatuses[i]; cs.Name == "default" {
				cs.Ready = true
				cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
			}
		}
	})
	recorded("Running again", "event phase Running → Pending", "start pod running (was Pending)")

	setStatus("failed", func(st *corev1.PodStatus) { st.Phase = corev1.PodFailed })
	// KCM's StatefulSet controller deletes a failed pod (to create it again): a destroy.
	recorded("the pod failed, then deleted by its StatefulSet", "stop pod failed", "destroy pod deleted")

	acts, _, lost := sup.Activity(0)
	var restart *backends.Activity
	for i := range acts {
		if acts[i].Member == pod && acts[i].Kind == "restart" {
			restart = &acts[i]
		}
	}
	if lost != 0 || restart == nil || restart.SandboxID != sid || restart.Attrs["reason"] != "OOMKilled" || restart.Attrs["exit_code"] != "137" || restart.Attrs["restarts"] != "1" {
		t.Errorf("the supervisor's restart activity: %+v (lost %d)", restart, lost)
	}
}

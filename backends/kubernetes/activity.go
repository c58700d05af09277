package kubernetes

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// watchPodActivity reports what happens to member pods as Activity (the timeline's): phase
// changes, restarts with the reason the container last ended (OOMKilled reported as an OOM
// too), a container starting to wait (CrashLoopBackOff, ImagePullBackOff), and deletion.
func (w *watcher) watchPodActivity(inf cache.SharedIndexInformer) error {
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*cachedPod)
			c, ok2 := cur.(*cachedPod)
			if !ok1 || !ok2 || !w.listed.Load() {
				return
			}
			for _, a := range podActivity(w.b.sandboxID, o, c, time.Now()) {
				w.emit(backends.Event{Type: backends.EventActivity, Activity: &a})
			}
		},
		DeleteFunc: func(obj any) {
			if !w.listed.Load() {
				return
			}
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*cachedPod); ok && p.labels.get(LabelInstance) != "" {
				w.emit(backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: time.Now(),
					SandboxID: w.b.sandboxID(p.Namespace, p.labels.get(LabelInstance)), Member: p.Name, Kind: sandbox.ActDestroy, Detail: "pod deleted"}})
			}
		},
	})
	return err
}

// podActivity compares two states of a member pod.
func podActivity(idOf func(ns, release string) string, old, cur *cachedPod, now time.Time) []backends.Activity {
	rel := cur.labels.get(LabelInstance)
	if rel == "" {
		return nil
	}
	base := backends.Activity{Time: now, SandboxID: idOf(cur.Namespace, rel), Member: cur.Name}
	var out []backends.Activity
	add := func(kind sandbox.ActivityKind, detail string, attrs map[string]string) {
		a := base
		a.Kind, a.Detail, a.Attrs = kind, detail, attrs
		out = append(out, a)
	}
	if old.phase != cur.phase {
		switch cur.phase {
		case corev1.PodRunning:
			add(sandbox.ActStart, "pod running (was "+string(old.phase)+")", map[string]string{"phase": string(cur.phase)})
		case corev1.PodSucceeded, corev1.PodFailed:
			add(sandbox.ActStop, "pod "+strings.ToLower(string(cur.phase)), map[string]string{"phase": string(cur.phase)})
		default:
			add(sandbox.ActEvent, fmt.Sprintf("phase %s → %s", old.phase, cur.phase), map[string]string{"phase": string(cur.phase)})
		}
	}
	if cur.restarts > old.restarts {
		reason, code, _ := strings.Cut(cur.lastExit, " ")
		attrs := map[string]string{"restarts": strconv.Itoa(cur.restarts)}
		detail := fmt.Sprintf("restarted (%d restarts)", cur.restarts)
		if reason != "" {
			attrs["reason"], attrs["exit_code"] = reason, code
			detail = fmt.Sprintf("restarted after %s, exit code %s (%d restarts)", reason, code, cur.restarts)
		}
		if reason == "OOMKilled" {
			add(sandbox.ActOOM, "killed: out of memory", map[string]string{"exit_code": code})
		}
		add(sandbox.ActRestart, detail, attrs)
	}
	if cur.waiting != "" && cur.waiting != old.waiting {
		add(sandbox.ActEvent, "waiting: "+cur.waiting, map[string]string{"reason": cur.waiting})
	}
	return out
}

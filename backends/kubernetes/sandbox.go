package kubernetes

import (
	"sort"
	"strconv"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// releaseRecord is what rangekeeper keeps of a Helm release Secret: its labels only (the
// storage driver's name/version/status plus the release's own labels such as inspectSandbox).
type releaseRecord struct {
	Name     string
	Revision int
	Status   string
	Inspect  bool
	Created  time.Time
}

// latestRecord picks the highest revision among a release's Secrets.
func latestRecord(objs []*metav1.PartialObjectMetadata) (releaseRecord, bool) {
	var best releaseRecord
	found := false
	for _, o := range objs {
		v, _ := strconv.Atoi(o.Labels["version"])
		if found && v <= best.Revision {
			continue
		}
		best = releaseRecord{
			Name:     o.Labels["name"],
			Revision: v,
			Status:   o.Labels["status"],
			Inspect:  o.Labels[HelmInspectFlag] == "true",
			Created:  o.CreationTimestamp.Time,
		}
		found = true
	}
	return best, found
}

// buildSandbox aggregates one release's pods (all carrying inspect/service) into a Sandbox.
// rec is the release's Helm record when rangekeeper may read it; policies are the
// CiliumNetworkPolicies selecting the release, when the cluster has Cilium's CRD.
func (b *Backend) buildSandbox(ns, release string, pods []*cachedPod, rec *releaseRecord, policies []*cachedPolicy, cilium bool) backends.Sandbox {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	sb := backends.Sandbox{
		ID:       b.sandboxID(ns, release),
		Name:     release,
		Backend:  backends.KindKubernetes,
		Endpoint: b.Name(),
		Members:  make([]backends.Member, 0, len(pods)),
	}
	for _, p := range pods {
		sb.Members = append(sb.Members, memberOf(p))
		if sb.Created.IsZero() || p.CreationTimestamp.Time.Before(sb.Created) {
			sb.Created = p.CreationTimestamp.Time
		}
		if sb.Task == "" {
			sb.Task = p.Annotations[AnnotationTask]
		}
		if sb.Sample == "" {
			sb.Sample = p.labels.get(LabelSample)
		}
	}
	sb.Status = backends.DeriveStatus(sb.Members)
	sb.Labels = commonLabels(pods)
	// Inspect's releases carry the Helm release label inspectSandbox=true; when the release
	// records cannot be read, Inspect's task annotation (always set by its helm install) is the
	// evidence.
	sb.Inspect = (rec != nil && rec.Inspect) || sb.Task != ""
	sb.Actionable = sb.Inspect
	sb.Extra = []backends.KeyValue{{Key: "namespace", Value: ns}, {Key: "context", Value: b.context}}
	if len(pods) > 0 {
		if v := pods[0].labels.get(LabelChartVer); v != "" {
			sb.Extra = append(sb.Extra, backends.KeyValue{Key: "chart version", Value: v})
		}
	}
	if rec != nil {
		sb.Extra = append(sb.Extra,
			backends.KeyValue{Key: "helm revision", Value: strconv.Itoa(rec.Revision)},
			backends.KeyValue{Key: "helm status", Value: rec.Status})
	} else {
		sb.Extra = append(sb.Extra, backends.KeyValue{Key: "helm record", Value: "not found or not readable"})
	}
	sb.Findings = releasePosture(pods, policies, cilium)
	return sb
}

// memberOf describes one pod.
func memberOf(p *cachedPod) backends.Member {
	m := backends.Member{
		ID:       string(p.UID),
		Name:     p.Name,
		Service:  p.labels.get(LabelService),
		State:    podState(p),
		Running:  p.phase == corev1.PodRunning && p.DeletionTimestamp == nil,
		Created:  p.CreationTimestamp.Time,
		Restarts: p.restarts,
	}
	if len(p.spec.spec.Containers) > 0 {
		m.Image = p.spec.spec.Containers[0].Image
	}
	return m
}

// podState is the phase, refined the way kubectl shows it (Terminating, CrashLoopBackOff…).
func podState(p *cachedPod) string { return stateName(p.DeletionTimestamp != nil, p.waiting, p.phase) }

func stateName(deleting bool, waiting string, phase corev1.PodPhase) string {
	switch {
	case deleting:
		return "Terminating"
	case waiting != "":
		return waiting
	case phase == "":
		return string(corev1.PodPending)
	}
	return string(phase)
}

// firstWaiting is the first container's waiting reason, if any.
func firstWaiting(statuses []corev1.ContainerStatus) string {
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
	}
	return ""
}

// commonLabels keeps the labels every member shares (the release's labels), minus the
// per-member ones.
func commonLabels(pods []*cachedPod) map[string]string {
	if len(pods) == 0 {
		return nil
	}
	first := pods[0].labels
	out := make(map[string]string, len(first.keys))
	for i, k := range first.keys {
		if k == LabelService || k == "controller-revision-hash" || k == "statefulset.kubernetes.io/pod-name" || k == "apps.kubernetes.io/pod-index" {
			continue
		}
		out[k] = first.vals[i]
	}
	for _, p := range pods[1:] {
		for k, v := range out {
			if !p.labels.has(k, v) {
				delete(out, k)
			}
		}
	}
	return out
}

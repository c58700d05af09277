package kubernetes

import (
	"fmt"
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachedPod is what the pod informer keeps of a pod: its identity and labels, the status the
// table shows, and its security-relevant spec, interned. An agent-env pod decoded from the API
// server is about 9 KB; this is a fraction, and the releases of one task, whose pods differ only
// in names, share one spec and one posture assessment.
type cachedPod struct {
	slimMeta // name, namespace, UID, resource version, times; annotations: the task only
	labels   labelSet
	spec     *podSpec
	phase    corev1.PodPhase
	restarts int
	waiting  string // the first container's waiting reason (CrashLoopBackOff…), if any
	lastExit string // why a container last ended (OOMKilled, Error…) and its code: the timeline's restart reason
}

// The informer's store wants a runtime.Object; nothing ever serialises a cachedPod.
func (p *cachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *cachedPod) DeepCopyObject() runtime.Object {
	c := *p
	c.slimMeta = p.slimMeta.deepCopy()
	return &c
}

// podSpec is one distinct security-relevant pod spec (slimSpec) and, computed once, the posture
// of any pod that has it (findings with Member left empty).
type podSpec struct {
	spec     corev1.PodSpec
	opts     PostureOptions
	once     sync.Once
	findings []backends.Finding
}

func (s *podSpec) posture() []backends.Finding {
	s.once.Do(func() { s.findings = podFindings(&corev1.Pod{Spec: s.spec}, s.opts) })
	return s.findings
}

// specTable interns pod specs by their wire form, so equal specs share one podSpec, and the
// strings of their labels.
type specTable struct {
	opts PostureOptions // the policy and runtime classes every spec's posture is graded by
	mu   sync.Mutex
	m    map[string]*podSpec
	// scratch and key: the slim spec and its encoding of the pod being cached (guarded by mu)
	scratch corev1.PodSpec
	key     []byte
	strs    map[string]string   // label keys and values, each kept once (guarded by mu)
	keySets map[string][]string // pods' sorted label keys, each distinct set kept once (labelset.go)
	// keyScratch and keyID: the label keys of the pod being cached and their joined form (mu)
	keyScratch []string
	keyID      []byte
	// egress: network policies' egress rules, each distinct set kept once (policycache.go)
	egress map[string][]egressRule
	// wire: specs by the bytes specFields keeps of their wire form (poddecode.go); wireKey,
	// wireSpec and wireLabels: the scratch of the pod being decoded (mu)
	wire       map[string]*podSpec
	wireKey    []byte
	wireSpec   []byte
	wireLabels []wireLabel
}

// maxSpecs bounds the table: past it, it starts over (pods already cached keep their spec; only
// the sharing with later pods is lost), so specs of pods long gone cannot pile up.
const maxSpecs = 4096

// maxStrings bounds the label strings kept: past it, the table starts over (as for specs).
const maxStrings = 8192

func newSpecTable(o PostureOptions) *specTable {
	return &specTable{opts: o, m: map[string]*podSpec{}, strs: map[string]string{}, keySets: map[string][]string{},
		egress: map[string][]egressRule{}, wire: map[string]*podSpec{}}
}

// labels returns in with its keys and values interned: decoded, every pod carries its own copy
// of the same keys and of most values (chart, version, service, task); at 50,000 pods that was
// a seventh of the heap.
func (t *specTable) labels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return in
	}
	out := make(map[string]string, len(in))
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range in {
		out[t.str(k)] = t.str(v)
	}
	return out
}

func (t *specTable) str(s string) string {
	if c, ok := t.strs[s]; ok {
		return c
	}
	if len(t.strs) >= maxStrings {
		clear(t.strs)
	}
	t.strs[s] = s
	return s
}

func (t *specTable) intern(full *corev1.PodSpec) *podSpec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.internLocked(full)
}

// internLocked is intern with t.mu held.
func (t *specTable) internLocked(full *corev1.PodSpec) *podSpec {
	slimSpecInto(&t.scratch, full)
	size := t.scratch.Size()
	if cap(t.key) < size {
		t.key = make([]byte, size)
	}
	key := t.key[:size]
	if n, err := t.scratch.MarshalToSizedBuffer(key); err != nil || n != size { // cannot happen for a decoded spec; keep it unshared rather than fail
		return &podSpec{spec: slimSpec(full), opts: t.opts}
	}
	if s, ok := t.m[string(key)]; ok {
		return s
	}
	if len(t.m) >= maxSpecs {
		clear(t.m)
	}
	s := &podSpec{spec: slimSpec(full), opts: t.opts} // its own copy: the scratch is reused
	t.m[string(key)] = s
	return s
}

// transform is the pod informer's transform: it turns a decoded pod into a cachedPod. It is
// idempotent (a cachedPod passes through).
func (t *specTable) transform(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return t.cache(p), nil
}

func (t *specTable) cache(p *corev1.Pod) *cachedPod {
	c := &cachedPod{slimMeta: slimMeta{
		Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
		CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
	}, labels: t.labelSet(p.Labels), spec: t.intern(&p.Spec), phase: p.Status.Phase, waiting: firstWaiting(p.Status.ContainerStatuses)}
	if task, ok := p.Annotations[AnnotationTask]; ok {
		c.Annotations = t.labels(map[string]string{AnnotationTask: task})
	}
	for _, cs := range p.Status.ContainerStatuses {
		c.restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil && c.lastExit == "" {
			c.lastExit = fmt.Sprintf("%s %d", t.Reason, t.ExitCode)
		}
	}
	return c
}

// releasePosture is the posture of a release: each pod's (from its shared spec, with the pod
// named as the member) and, with Cilium, its network policies'.
func releasePosture(pods []*cachedPod, policies []*cachedPolicy, cilium bool) []backends.Finding {
	n := 0
	for _, p := range pods {
		n += len(p.spec.posture())
	}
	out := make([]backends.Finding, 0, n)
	for _, p := range pods {
		for _, f := range p.spec.posture() {
			f.Member = p.Name
			out = append(out, f)
		}
	}
	if cilium {
		out = append(out, policyFindings(policies)...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

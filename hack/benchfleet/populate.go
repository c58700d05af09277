package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
)

// placeholder is the release name the chart is rendered with once; every release is stamped
// from that rendering by replacing it.
const placeholder = "rkplaceholder"

// podsPerNode stays under kubetest's node capacity (20,000 pods).
const podsPerNode = 10_000

var ciliumGVR = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumnetworkpolicies"}

// fleetSpec is what one Inspect sample looks like in the cluster: the objects `helm install` of
// the agent-env chart creates that rangekeeper or k9s watch (the StatefulSets' pods, the
// CiliumNetworkPolicy, Helm's release record), as JSON with the placeholder release name.
type fleetSpec struct {
	pods     [][]byte
	policies [][]byte
	perRel   int
}

// renderFleetSpec renders the real agent-env chart client-side (what `helm template` does) with
// the values Inspect passes: services, inspectTaskName annotation, inspectSampleUUID label.
func renderFleetSpec(chartDir string, services []string) (*fleetSpec, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", chartDir, err)
	}
	svcs := map[string]any{}
	for _, s := range services {
		svcs[s] = map[string]any{"image": "python:3.12-bookworm", "command": []any{"tail", "-f", "/dev/null"}}
	}
	vals := map[string]any{
		"services":    svcs,
		"annotations": map[string]any{"inspectTaskName": "bench_fleet"},
		"labels":      map[string]any{"inspectSampleUUID": placeholder},
	}
	inst := action.NewInstall(action.NewConfiguration())
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true
	inst.ReleaseName, inst.Namespace = placeholder, "default"
	rel, err := inst.RunWithContext(context.Background(), chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", chartDir, err)
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("render chart: unexpected release type %T", rel)
	}
	fs := &fleetSpec{}
	for _, doc := range strings.Split(r.Manifest, "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("rendered manifest: %w", err)
		}
		u := &unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "StatefulSet":
			var sts appsv1.StatefulSet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &sts); err != nil {
				return nil, fmt.Errorf("statefulset: %w", err)
			}
			// What the StatefulSet controller would create for replica 0.
			p := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: sts.Spec.Template.ObjectMeta, Spec: sts.Spec.Template.Spec}
			p.Name = sts.Name + "-0"
			p.Labels["statefulset.kubernetes.io/pod-name"] = p.Name
			p.Labels["apps.kubernetes.io/pod-index"] = "0"
			p.Spec.Hostname, p.Spec.Subdomain = p.Name, sts.Spec.ServiceName
			zero := int64(0)
			p.Spec.TerminationGracePeriodSeconds = &zero // quick teardown of the bench namespace
			raw, err := json.Marshal(p)
			if err != nil {
				return nil, err
			}
			fs.pods = append(fs.pods, raw)
		case "CiliumNetworkPolicy":
			raw, err := json.Marshal(obj)
			if err != nil {
				return nil, err
			}
			fs.policies = append(fs.policies, raw)
		}
	}
	if len(fs.pods) == 0 {
		return nil, fmt.Errorf("render chart %s: no StatefulSet rendered", chartDir)
	}
	fs.perRel = len(fs.pods)
	return fs, nil
}

func releaseName(i int) string { return fmt.Sprintf("rk%06d", i) }

// populator creates releases in one namespace, fast: many concurrent creates through a client
// with a high rate limit.
type populator struct {
	c       *kubetest.Cluster
	cs      kubernetes.Interface
	dyn     dynamic.Interface
	md      metadata.Interface
	ns      string
	spec    *fleetSpec
	records bool // also create Helm's release record Secrets
	nodes   int  // kwok nodes made so far
	have    int  // releases made so far
}

func newPopulator(c *kubetest.Cluster, ns string, spec *fleetSpec, records bool) (*populator, error) {
	rc := rest.CopyConfig(c.Config)
	rc.QPS, rc.Burst = 5000, 10000
	p := &populator{c: c, ns: ns, spec: spec, records: records, nodes: 1}
	var err error
	if p.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, err
	}
	if p.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, err
	}
	if p.md, err = metadata.NewForConfig(rc); err != nil {
		return nil, err
	}
	_, err = p.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	return p, err
}

// grow creates releases until the namespace holds wantPods pods, then waits until kwok reports
// every one Running.
func (p *populator) grow(ctx context.Context, wantPods, workers int, logf func(string, ...any)) error {
	want := (wantPods + p.spec.perRel - 1) / p.spec.perRel
	for need := (want*p.spec.perRel + podsPerNode - 1) / podsPerNode; p.nodes < need; p.nodes++ {
		if err := p.c.AddNode(ctx, fmt.Sprintf("kwok-node-%d", p.nodes)); err != nil {
			return err
		}
	}
	start := time.Now()
	var next atomic.Int64
	next.Store(int64(p.have))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= want || ctx.Err() != nil {
					return
				}
				if err := p.createRelease(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	logf("created releases %d..%d (%d pods) in %s", p.have, want-1, (want-p.have)*p.spec.perRel, time.Since(start).Round(time.Second))
	p.have = want
	return p.waitRunning(ctx, want*p.spec.perRel, logf)
}

func (p *populator) createRelease(ctx context.Context, i int) error {
	rel := releaseName(i)
	stamp := func(raw []byte) []byte { return bytes.ReplaceAll(raw, []byte(placeholder), []byte(rel)) }
	for j, raw := range p.spec.pods {
		var pod corev1.Pod
		if err := json.Unmarshal(stamp(raw), &pod); err != nil {
			return err
		}
		pod.Namespace = p.ns
		pod.Spec.NodeName = fmt.Sprintf("kwok-node-%d", (i*p.spec.perRel+j)/podsPerNode)
		if pod.Spec.NodeName == "kwok-node-0" {
			pod.Spec.NodeName = kubetest.NodeName
		}
		if err := create(func() error { _, err := p.cs.CoreV1().Pods(p.ns).Create(ctx, &pod, metav1.CreateOptions{}); return err }); err != nil {
			return fmt.Errorf("create pod %s: %w", pod.Name, err)
		}
	}
	for _, raw := range p.spec.policies {
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(stamp(raw)); err != nil {
			return err
		}
		u.SetNamespace(p.ns)
		if err := create(func() error {
			_, err := p.dyn.Resource(ciliumGVR).Namespace(p.ns).Create(ctx, &u, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("create policy %s: %w", u.GetName(), err)
		}
	}
	if !p.records {
		return nil
	}
	// Helm's storage driver record: rangekeeper reads only its labels (metadata), never data.
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + rel + ".v1", Namespace: p.ns,
			Labels: map[string]string{"owner": "helm", "name": rel, "version": "1", "status": "deployed", "inspectSandbox": "true"}},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte("bench-fleet placeholder: not a real release")},
	}
	return create(func() error {
		_, err := p.cs.CoreV1().Secrets(p.ns).Create(ctx, sec, metav1.CreateOptions{})
		return err
	})
}

// create runs one create, tolerating an object left by an earlier, interrupted run and retrying
// the API server's "too many requests" pushback.
func create(fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		switch {
		case err == nil || apierrors.IsAlreadyExists(err):
			return nil
		case (apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err)) && attempt < 20:
			time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
		default:
			return err
		}
	}
}

// waitRunning polls (metadata only, from the watch cache) until want pods are Running.
func (p *populator) waitRunning(ctx context.Context, want int, logf func(string, ...any)) error {
	start := time.Now()
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	last := -1
	for {
		l, err := p.md.Resource(podsGVR).Namespace(p.ns).List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running", ResourceVersion: "0"})
		if err != nil {
			return fmt.Errorf("list running pods: %w", err)
		}
		n := len(l.Items)
		if n >= want {
			logf("%d pods Running after %s", n, time.Since(start).Round(time.Second))
			return nil
		}
		if n != last && time.Since(start) > 10*time.Second {
			logf("  %d/%d pods Running", n, want)
		}
		last = n
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
	}
}

package kubernetes

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// agentEnvChart is Inspect's real chart 0.14.0, vendored as test data (see its README).
const agentEnvChart = "testdata/agent-env/chart"

// renderAgentEnv renders the real agent-env chart client-side (what `helm template` does) and
// returns the pods its StatefulSets would create and its CiliumNetworkPolicies.
func renderAgentEnv(t testing.TB, release, ns string, values map[string]any) ([]*corev1.Pod, []*unstructured.Unstructured) {
	t.Helper()
	chrt, err := loader.Load(agentEnvChart)
	if err != nil {
		t.Fatalf("load chart %s: %v", agentEnvChart, err)
	}
	inst := action.NewInstall(action.NewConfiguration())
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true
	inst.ReleaseName, inst.Namespace = release, ns
	rel, err := inst.RunWithContext(context.Background(), chrt, values)
	if err != nil {
		t.Fatalf("render chart: %v", err)
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		t.Fatalf("render chart: unexpected release type %T", rel)
	}
	var pods []*corev1.Pod
	var pols []*unstructured.Unstructured
	for _, doc := range strings.Split(r.Manifest, "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("rendered manifest: %v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "StatefulSet":
			var sts appsv1.StatefulSet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &sts); err != nil {
				t.Fatalf("statefulset: %v", err)
			}
			p := &corev1.Pod{ObjectMeta: sts.Spec.Template.ObjectMeta, Spec: sts.Spec.Template.Spec}
			p.Name, p.Namespace = sts.Name+"-0", ns
			pods = append(pods, p)
		case "CiliumNetworkPolicy":
			u.SetNamespace(ns)
			pols = append(pols, u)
		}
	}
	return pods, pols
}

package kubernetes

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"unsafe"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// hardenedSC is a main-container securityContext that passes the Restricted profile.
var hardenedSC = map[string]any{
	"allowPrivilegeEscalation": false,
	"capabilities":             map[string]any{"drop": []any{"ALL"}},
	"runAsNonRoot":             true,
	"runAsUser":                1000,
	"readOnlyRootFilesystem":   true,
	"seccompProfile":           map[string]any{"type": "RuntimeDefault"},
}

const pinnedImage = "python:3.12-bookworm@sha256:0000000000000000000000000000000000000000000000000000000000000001"

// TestPostureOfRenderedChart renders the real agent-env chart with weak, default and hardened
// values and checks the findings against golden files.
func TestPostureOfRenderedChart(t *testing.T) {
	cases := []struct {
		name   string
		values map[string]any
		want   []string // rule IDs that must be present
		absent []string // rule IDs that must not be present
	}{
		{
			name: "weak",
			values: map[string]any{
				"allowDomains":                 []any{"*"},
				"allowEntities":                []any{"kube-apiserver"},
				"allowCIDR":                    []any{"0.0.0.0/0"},
				"automountServiceAccountToken": true,
				"services": map[string]any{"default": map[string]any{
					"image":            "python:latest",
					"runtimeClassName": "runc",
					"securityContext": map[string]any{
						"privileged":   true,
						"runAsUser":    0,
						"capabilities": map[string]any{"add": []any{"SYS_ADMIN", "NET_RAW"}},
					},
					"volumes":      []any{map[string]any{"name": "docker", "hostPath": map[string]any{"path": "/var/run/docker.sock"}}},
					"volumeMounts": []any{map[string]any{"name": "docker", "mountPath": "/var/run/docker.sock"}},
				}},
			},
			want:   []string{"K8S-H01", "K8S-H03", "K8S-H04", "K8S-H06", "K8S-H07", "K8S-H18", "K8S-T01", "K8S-T05", "HELM-N01", "HELM-N04"},
			absent: []string{"K8S-N01", "K8S-N02", "K8S-T06"},
		},
		{
			name:   "default",
			values: map[string]any{},
			want:   []string{"K8S-H05", "K8S-H06", "K8S-H07", "K8S-H08", "K8S-H17"},
			absent: []string{"K8S-H01", "K8S-H18", "K8S-T01", "K8S-R01", "HELM-N01", "HELM-N02", "K8S-N01", "K8S-N02"},
		},
		{
			name: "hardened",
			values: map[string]any{
				"allowDomains": []any{"pypi.org"},
				"services":     map[string]any{"default": map[string]any{"image": pinnedImage, "securityContext": hardenedSC}},
			},
			want: []string{"HELM-N02"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods, pols := renderAgentEnv(t, "lsphdyup", "evals", tc.values)
			if len(pods) != 1 || len(pols) < 2 {
				t.Fatalf("rendered %d pods and %d policies; want 1 and at least 2", len(pods), len(pols))
			}
			got := Posture(pods, pols, true)
			ids := map[string]bool{}
			for _, f := range got {
				ids[f.RuleID] = true
				if _, err := catalog.ParseSeverity(f.Severity.String()); err != nil || f.Severity == catalog.SeverityNone {
					t.Errorf("%s has no severity", f.RuleID)
				}
			}
			for _, id := range tc.want {
				if !ids[id] {
					t.Errorf("missing %s", id)
				}
			}
			for _, id := range tc.absent {
				if ids[id] {
					t.Errorf("unexpected %s", id)
				}
			}
			golden(t, filepath.Join("testdata", "posture", tc.name+".golden"), formatFindings(got))
			samePostureWhenSlim(t, pods, pols, true, got)
		})
	}
}

// samePostureWhenSlim checks that what the informer caches keep of pods (podcache.go) and
// policies (policycache.go) yields exactly the findings of the full objects.
func samePostureWhenSlim(t *testing.T, pods []*corev1.Pod, pols []*unstructured.Unstructured, cilium bool, want []backends.Finding) {
	t.Helper()
	var cp []*cachedPolicy
	for _, u := range pols {
		o, _ := newSpecTable(PostureOptions{}).cachePolicy(u.DeepCopy())
		cp = append(cp, o.(*cachedPolicy))
	}
	if got := releasePosture(cachedPods(pods...), cp, cilium); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("posture of the slimmed objects differs:\n--- full\n%s--- slim\n%s", formatFindings(want), formatFindings(got))
	}
}

// cachedPods turns pods into what the pod informer keeps of them (one spec table for all).
func cachedPods(pods ...*corev1.Pod) []*cachedPod {
	specs := newSpecTable(PostureOptions{})
	out := make([]*cachedPod, len(pods))
	for i, p := range pods {
		out[i] = specs.cache(p.DeepCopy())
	}
	return out
}

func formatFindings(fs []backends.Finding) string {
	lines := make([]string, 0, len(fs))
	for _, f := range fs {
		lines = append(lines, fmt.Sprintf("%s %s %s %s %s", f.RuleID, f.Severity, f.Axis, f.Member, f.Evidence))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run go test -update to accept):\n--- want\n%s--- got\n%s", path, want, got)
	}
}

// hardenedPod triggers no finding; each case weakens one thing.
func hardenedPod() corev1.Pod {
	yes, no := true, false
	rc := "gvisor"
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		RuntimeClassName: &rc, AutomountServiceAccountToken: &no, EnableServiceLinks: &no,
		Containers: []corev1.Container{{Name: "c", Image: pinnedImage,
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: mustQty("1Gi"), corev1.ResourceCPU: mustQty("1")}},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes, ReadOnlyRootFilesystem: &yes,
				Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}},
	}}
}

// TestPostureRules checks individual rules on hand-written pod specs.
func TestPostureRules(t *testing.T) {
	yes, no := true, false
	root := int64(0)
	cases := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   map[string]catalog.Severity // rule -> highest severity expected
	}{
		{"hardened", func(*corev1.Pod) {}, map[string]catalog.Severity{}},
		{"hostPID", func(p *corev1.Pod) { p.Spec.HostPID = true }, map[string]catalog.Severity{"K8S-H02": catalog.SeverityCritical}},
		{"hostIPC", func(p *corev1.Pod) { p.Spec.HostIPC = true }, map[string]catalog.Severity{"K8S-H02": catalog.SeverityHigh}},
		{"hostPath ro", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "d", MountPath: "/d", ReadOnly: true}}
		}, map[string]catalog.Severity{"K8S-H03": catalog.SeverityHigh}},
		{"hostPath rw", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "d", MountPath: "/d"}}
		}, map[string]catalog.Severity{"K8S-H03": catalog.SeverityCritical}},
		{"NET_RAW", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
		}, map[string]catalog.Severity{"K8S-H04": catalog.SeverityHigh, "K8S-H05": catalog.SeverityMedium}},
		{"root escalation", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.RunAsUser = &root
			p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		}, map[string]catalog.Severity{"K8S-H07": catalog.SeverityMedium, "K8S-H06": catalog.SeverityHigh}},
		{"user namespace exempts root", func(p *corev1.Pod) {
			p.Spec.HostUsers = &no
			p.Spec.Containers[0].SecurityContext.RunAsNonRoot = nil
		}, map[string]catalog.Severity{}},
		{"seccomp unconfined", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		}, map[string]catalog.Severity{"K8S-H08": catalog.SeverityHigh}},
		{"ephemeral container checked", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: pinnedImage, SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}}
		}, map[string]catalog.Severity{"K8S-H01": catalog.SeverityCritical, "K8S-H05": catalog.SeverityMedium, "K8S-H06": catalog.SeverityHigh,
			"K8S-H07": catalog.SeverityMedium, "K8S-H08": catalog.SeverityMedium, "K8S-H17": catalog.SeverityMedium, "K8S-R01": catalog.SeverityMedium, "K8S-R02": catalog.SeverityLow}},
		{"token mounted", func(p *corev1.Pod) {
			p.Spec.AutomountServiceAccountToken = nil
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
		}, map[string]catalog.Severity{"K8S-T01": catalog.SeverityHigh}},
		{"runc and service links", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = nil
			p.Spec.EnableServiceLinks = nil
			p.Spec.DNSPolicy = corev1.DNSDefault
		}, map[string]catalog.Severity{"K8S-H18": catalog.SeverityMedium, "K8S-T06": catalog.SeverityLow, "K8S-N06": catalog.SeverityMedium}},
		{"untagged image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry:5000/python" },
			map[string]catalog.Severity{"K8S-T05": catalog.SeverityMedium}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := hardenedPod()
			tc.mutate(&p)
			got := map[string]catalog.Severity{}
			all := Posture([]*corev1.Pod{&p}, nil, false)
			samePostureWhenSlim(t, []*corev1.Pod{&p}, nil, false, all)
			for _, f := range all {
				if f.Severity > got[f.RuleID] {
					got[f.RuleID] = f.Severity
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRuntimeClassPolicy: K8S-H18 follows the sandboxed-runtime policy and, when known, the
// RuntimeClasses the cluster offers.
func TestRuntimeClassPolicy(t *testing.T) {
	for _, tc := range []struct {
		o    PostureOptions
		want catalog.Severity
	}{
		{PostureOptions{}, catalog.SeverityMedium},
		{PostureOptions{RuntimePolicy: catalog.RuntimeRequired}, catalog.SeverityHigh},
		{PostureOptions{RuntimePolicy: catalog.RuntimeOff}, catalog.SeverityInfo},
		{PostureOptions{RuntimeClasses: []string{}}, catalog.SeverityInfo},
		{PostureOptions{RuntimeClasses: []string{"gvisor"}}, catalog.SeverityMedium},
	} {
		p := hardenedPod()
		p.Spec.RuntimeClassName = nil
		var got catalog.Severity
		for _, f := range PostureWith([]*corev1.Pod{&p}, nil, false, tc.o) {
			if f.RuleID == "K8S-H18" {
				got = f.Severity
			}
		}
		if got != tc.want {
			t.Errorf("%+v: K8S-H18 %s, want %s", tc.o, got, tc.want)
		}
	}
}

// TestPolicyFindings covers the Cilium checks that the chart cannot render on its own.
func TestPolicyFindings(t *testing.T) {
	egress := func(rules ...map[string]any) *unstructured.Unstructured {
		rs := make([]any, len(rules))
		for i, r := range rules {
			rs[i] = r
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"egress": rs}}}
	}
	ingressOnly := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "i"}, "spec": map[string]any{"ingress": []any{map[string]any{}}}}}
	cases := []struct {
		name string
		pols []*unstructured.Unstructured
		want []string
	}{
		{"no policy", nil, []string{"K8S-N01"}},
		{"ingress only", []*unstructured.Unstructured{ingressOnly}, []string{"K8S-N02"}},
		{"metadata CIDR", []*unstructured.Unstructured{egress(map[string]any{"toCIDR": []any{"169.254.0.0/16"}})}, []string{"K8S-N04"}},
		{"world", []*unstructured.Unstructured{egress(map[string]any{"toEntities": []any{"world"}})}, []string{"HELM-N01"}},
		{"scoped", []*unstructured.Unstructured{egress(map[string]any{"toCIDR": []any{"10.1.2.0/24"}})}, nil},
		{"domains beside in-cluster rules", []*unstructured.Unstructured{egress(
			map[string]any{"toEndpoints": []any{map[string]any{}}, "toPorts": []any{map[string]any{}}},
			map[string]any{"toFQDNs": []any{map[string]any{"matchPattern": "pypi.org"}}, "toPorts": []any{map[string]any{}}})}, []string{"HELM-N02"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			samePostureWhenSlim(t, nil, tc.pols, true, Posture(nil, tc.pols, true))
			for _, f := range policyFindings(policiesOf(tc.pols)) {
				got = append(got, f.RuleID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("rules = %v, want %v", got, tc.want)
			}
		})
	}
}

func mustQty(s string) resource.Quantity { return resource.MustParse(s) }

// Pods cached by one table share their label strings (keys, and values like the chart's and
// the service's), keep their own values where they differ, and leave the decoded pod's map alone.
func TestCachedPodsShareLabelStrings(t *testing.T) {
	mk := func(name, instance string) *corev1.Pod {
		// Each string its own allocation, as decoded from the wire.
		k := func(s string) string { return string([]byte(s)) }
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{
			k(LabelInstance): k(instance), k(LabelService): k("default"), k("app.kubernetes.io/name"): k("agent-env")}}}
	}
	a, b := mk("a-default-0", "rel-a"), mk("b-default-0", "rel-b")
	specs := newSpecTable(PostureOptions{})
	ca, cb := specs.cache(a), specs.cache(b)
	if ca.labels.get(LabelInstance) != "rel-a" || cb.labels.get(LabelInstance) != "rel-b" || cb.labels.get(LabelService) != "default" {
		t.Fatalf("labels changed: %v / %v", ca.labels, cb.labels)
	}
	if unsafe.StringData(ca.labels.get(LabelService)) != unsafe.StringData(cb.labels.get(LabelService)) {
		t.Error("the two pods keep separate copies of the value \"default\"")
	}
	if &ca.labels.keys[0] != &cb.labels.keys[0] {
		t.Error("the two pods keep separate copies of their keys")
	}
	if len(a.Labels) != 3 {
		t.Errorf("the decoded pod's labels were changed: %v", a.Labels)
	}
}

// Policies with the same egress rules share one cached copy; other rules keep their own, and the
// posture judged from either is unchanged.
func TestCachedPoliciesShareEgressRules(t *testing.T) {
	pol := func(name string, rules ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name, "namespace": "ns"},
			"spec": map[string]any{"endpointSelector": map[string]any{"matchLabels": map[string]any{LabelInstance: name}}, "egress": rules}}}
	}
	world := func() any { return map[string]any{"toEntities": []any{"world"}} }
	specs := newSpecTable(PostureOptions{})
	cache := func(u *unstructured.Unstructured) *cachedPolicy {
		o, err := specs.cachePolicy(u)
		if err != nil {
			t.Fatal(err)
		}
		return o.(*cachedPolicy)
	}
	a, b := cache(pol("a", world())), cache(pol("b", world()))
	c := cache(pol("c", map[string]any{"toCIDR": []any{"10.1.2.0/24"}}))
	if &a.egress[0] != &b.egress[0] {
		t.Error("two policies with the same egress keep separate rules")
	}
	if &a.egress[0] == &c.egress[0] || len(c.egress[0].cidrs) != 1 {
		t.Errorf("a different policy shares the rules: %+v", c.egress)
	}
	if a.release != "a" || b.release != "b" || !a.hasEgress {
		t.Errorf("identity lost: %+v / %+v", a, b)
	}
	if got, want := fmt.Sprint(policyFindings([]*cachedPolicy{b})), fmt.Sprint(policyFindings(policiesOf([]*unstructured.Unstructured{pol("b", world())}))); got != want {
		t.Errorf("posture of the shared rules %s, want %s", got, want)
	}
}

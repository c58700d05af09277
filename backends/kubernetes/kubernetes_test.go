package kubernetes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/config"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

const twoContexts = `apiVersion: v1
kind: Config
current-context: staging
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: not-a-real-token}
contexts:
- name: staging
  context: {cluster: c, user: u, namespace: evals}
- name: arn:aws:eks:eu-west-2:000000000000:cluster/range
  context: {cluster: c, user: u}
`

func TestNewContexts(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	eks := "arn:aws:eks:eu-west-2:000000000000:cluster/range"
	cases := []struct {
		name    string
		cfg     config.KubernetesConfig
		want    []string
		wantErr string
	}{
		{"current context", config.KubernetesConfig{Kubeconfig: kc}, []string{"k8s:staging"}, ""},
		{"several contexts", config.KubernetesConfig{Kubeconfig: kc, Contexts: []string{"staging", eks}}, []string{"k8s:staging", "k8s:" + eks}, ""},
		{"unknown context", config.KubernetesConfig{Kubeconfig: kc, Contexts: []string{"prod"}}, nil, `has no context "prod"`},
		{"missing file", config.KubernetesConfig{Kubeconfig: filepath.Join(dir, "nope")}, nil, filepath.Join(dir, "nope")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := New(tc.cfg, "")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, b := range bs {
				names = append(names, b.Name())
				if b.Kind() != backends.KindKubernetes {
					t.Errorf("kind %s", b.Kind())
				}
			}
			if strings.Join(names, " ") != strings.Join(tc.want, " ") {
				t.Errorf("names %v, want %v", names, tc.want)
			}
		})
	}
}

func TestParseID(t *testing.T) {
	b, err := NewForConfig("arn:aws:eks:r:0:cluster/range", &restConfigForTest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		id, ns, rel string
		ok          bool
	}{
		{"k8s:arn:aws:eks:r:0:cluster/range/evals/lsphdyup", "evals", "lsphdyup", true},
		{"k8s:other/evals/lsphdyup", "", "", false},
		{"k8s:arn:aws:eks:r:0:cluster/range/evals", "", "", false},
		{"k8s:arn:aws:eks:r:0:cluster/range/evals/a/b", "", "", false},
	}
	for _, tc := range cases {
		ns, rel, err := b.parseID(tc.id)
		if (err == nil) != tc.ok || ns != tc.ns || rel != tc.rel {
			t.Errorf("parseID(%q) = %q, %q, %v", tc.id, ns, rel, err)
		}
		if err != nil && !errors.Is(err, backends.ErrNotFound) {
			t.Errorf("parseID(%q): error %v is not ErrNotFound", tc.id, err)
		}
	}
	if got := b.sandboxID("evals", "lsphdyup"); got != cases[0].id {
		t.Errorf("sandboxID = %q", got)
	}
}

func TestSupports(t *testing.T) {
	b, err := NewForConfig("c", &restConfigForTest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []backends.Action{backends.ActionTeardown, backends.ActionReset, backends.ActionExec, backends.ActionCopy, backends.ActionProbe} {
		if ok, why := backends.Supports(b, a); !ok {
			t.Errorf("%s unsupported: %s", a, why)
		}
	}
	for _, a := range []backends.Action{backends.ActionSnapshot, backends.ActionRevert} {
		if ok, why := backends.Supports(b, a); ok || !strings.Contains(why, "reset available") {
			t.Errorf("%s: supported=%v reason %q", a, ok, why)
		}
	}
}

func TestBuildSandbox(t *testing.T) {
	b, err := NewForConfig("c", &restConfigForTest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pod := func(name, svc string, phase corev1.PodPhase, restarts int32, created time.Time) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name", CreationTimestamp: metav1.NewTime(created),
				Labels:      map[string]string{LabelInstance: "rel", LabelService: svc, LabelSample: "s1", LabelChartVer: "0.14.0", "statefulset.kubernetes.io/pod-name": name},
				Annotations: map[string]string{AnnotationTask: "task1"}},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: svc, Image: "img:1"}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{RestartCount: restarts}}},
		}
	}
	victim := pod("agent-env-rel-victim-0", "victim", corev1.PodPending, 0, t0)
	victim.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
	pods := []*corev1.Pod{victim, pod("agent-env-rel-default-0", "default", corev1.PodRunning, 2, t0.Add(time.Second))}
	sb := b.buildSandbox("evals", "rel", cachedPods(pods...), &releaseRecord{Revision: 3, Status: "deployed", Inspect: true}, nil, false)
	if sb.ID != "k8s:c/evals/rel" || sb.Status != backends.StatusPartial || !sb.Inspect || !sb.Actionable || sb.Task != "task1" || sb.Sample != "s1" {
		t.Errorf("sandbox %+v", sb)
	}
	if !sb.Created.Equal(t0) {
		t.Errorf("created %v, want the oldest member's %v", sb.Created, t0)
	}
	if sb.Members[0].Service != "default" || sb.Members[0].Restarts != 2 || sb.Members[1].State != "CrashLoopBackOff" {
		t.Errorf("members %+v", sb.Members)
	}
	if _, ok := sb.Labels["statefulset.kubernetes.io/pod-name"]; ok || sb.Labels[LabelSample] != "s1" {
		t.Errorf("labels %v", sb.Labels)
	}
	// Without Inspect's release label or task annotation, a release is listed but not actionable.
	for _, p := range pods {
		delete(p.Annotations, AnnotationTask)
	}
	sb = b.buildSandbox("evals", "rel", cachedPods(pods...), nil, nil, false)
	if sb.Inspect || sb.Actionable {
		t.Errorf("non-Inspect release marked inspect=%v actionable=%v", sb.Inspect, sb.Actionable)
	}
}

// restConfigForTest points at a closed loopback port: these tests never contact it.
var restConfigForTest = rest.Config{Host: "https://127.0.0.1:1"}

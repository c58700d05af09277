package kubernetes

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// These tests run against a real kube-apiserver + etcd, kwok as the kubelet, and the real
// scheduler and controller manager (kubetest), with the real agent-env chart installed through
// the Helm SDK.

func TestClusterWatchListsReleases(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	easy := release{name: newReleaseName(), task: "ctf_easy", sample: "3f1c2a9e-0001"}
	multi := release{name: newReleaseName(), task: "ctf_hard", sample: "3f1c2a9e-0002", services: []string{"default", "victim"}}
	plain := release{name: newReleaseName()} // not installed by Inspect
	for _, r := range []release{easy, multi, plain} {
		install(t, b, ns, r)
	}
	// A pod of the same instance label but without inspect/service is not a sandbox member.
	stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Labels: map[string]string{LabelInstance: easy.name}},
		Spec: corev1.PodSpec{NodeName: kubetest.NodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := c.Client.CoreV1().Pods(ns).Create(context.Background(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	f := newFleet()
	watch(t, b, f)
	id := func(r release) string { return "k8s:envtest/" + ns + "/" + r.name }
	f.wait(t, 90*time.Second, "three releases with running members and their posture", func(m map[string]backends.Sandbox) bool {
		return len(m) == 3 && settled(m[id(easy)], 1) && settled(m[id(multi)], 2) && settled(m[id(plain)], 1)
	})
	if f.events[0].Type != backends.EventReset {
		t.Errorf("first event is %v, want EventReset", f.events[0].Type)
	}
	// A second watch on the now quiet namespace sends the whole fleet once and nothing more:
	// the informers' initial adds are not echoed as upserts.
	quiet := newFleet()
	watch(t, b, quiet)
	quiet.wait(t, 30*time.Second, "the second watch's reset", func(m map[string]backends.Sandbox) bool {
		return len(m) == 3 && settled(m[id(easy)], 1) && settled(m[id(multi)], 2) && settled(m[id(plain)], 1)
	})
	time.Sleep(4 * debounce)
	quiet.mu.Lock()
	want := 1 // one reset; two when the first came before the policies had listed (pending)
	if len(quiet.events) > 0 && quiet.events[0].Type == backends.EventReset && len(quiet.events[0].Sandboxes) > 0 &&
		quiet.events[0].Sandboxes[0].PosturePending != "" {
		want = 2
	}
	resets := 0
	for _, e := range quiet.events {
		if e.Type == backends.EventReset {
			resets++
		}
	}
	if n := len(quiet.events); n != want || resets != want {
		t.Errorf("a quiet fleet produced %d events (%d resets), want exactly %d reset(s)", n, resets, want)
	}
	quiet.mu.Unlock()
	cases := []struct {
		r        release
		inspect  bool
		services string
	}{
		{easy, true, "default"},
		{multi, true, "default,victim"},
		{plain, false, "default"},
	}
	for _, tc := range cases {
		sb, _ := f.get(id(tc.r))
		if sb.Name != tc.r.name || sb.Task != tc.r.task || sb.Sample != tc.r.sample {
			t.Errorf("%s: name/task/sample = %q/%q/%q, want %q/%q/%q", tc.r.name, sb.Name, sb.Task, sb.Sample, tc.r.name, tc.r.task, tc.r.sample)
		}
		if sb.Inspect != tc.inspect || sb.Actionable != tc.inspect {
			t.Errorf("%s: inspect/actionable = %v/%v, want %v", tc.r.name, sb.Inspect, sb.Actionable, tc.inspect)
		}
		if sb.Status != backends.StatusRunning || sb.Backend != backends.KindKubernetes || sb.Endpoint != "k8s:envtest" {
			t.Errorf("%s: status/backend/endpoint = %s/%s/%s", tc.r.name, sb.Status, sb.Backend, sb.Endpoint)
		}
		var svcs []string
		for _, m := range sb.Members {
			svcs = append(svcs, m.Service)
			if m.State != "Running" || m.ID == "" || m.Image != "python:3.12-bookworm" {
				t.Errorf("%s: member %+v", tc.r.name, m)
			}
		}
		if strings.Join(svcs, ",") != tc.services {
			t.Errorf("%s: member services %v, want %s", tc.r.name, svcs, tc.services)
		}
		extra := map[string]string{}
		for _, kv := range sb.Extra {
			extra[kv.Key] = kv.Value
		}
		if extra["namespace"] != ns || extra["chart version"] != "0.14.0" || extra["helm revision"] != "1" || extra["helm status"] != "deployed" {
			t.Errorf("%s: extra = %v", tc.r.name, extra)
		}
		// The chart's defaults leave the main container without a securityContext.
		rules := map[string]bool{}
		for _, fd := range sb.Findings {
			rules[fd.RuleID] = true
		}
		if !rules["K8S-H06"] || !rules["K8S-H08"] || rules["K8S-N01"] || rules["HELM-N01"] {
			t.Errorf("%s: findings %v: want the chart defaults' K8S-H06/H08 and a release egress policy", tc.r.name, rules)
		}
	}
}

func TestClusterLiveWeakPosture(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	weak := release{name: newReleaseName(), task: "ctf_weak", sample: "s-weak", values: map[string]any{
		"allowDomains": []any{"*"},
		"services": map[string]any{"default": map[string]any{"image": "python:3.12-bookworm",
			"securityContext": map[string]any{"privileged": true}}},
	}}
	install(t, b, ns, weak)
	f := newFleet()
	watch(t, b, f)
	sid := "k8s:envtest/" + ns + "/" + weak.name
	f.wait(t, 90*time.Second, "the weak release and its posture", func(m map[string]backends.Sandbox) bool { return settled(m[sid], 1) })
	sb, _ := f.get(sid)
	rules := map[string]bool{}
	for _, fd := range sb.Findings {
		rules[fd.RuleID] = true
	}
	if !rules["K8S-H01"] || !rules["HELM-N01"] {
		t.Errorf("findings %v: want K8S-H01 (privileged) and HELM-N01 (allowDomains *)", rules)
	}
	if sb.WorstSeverity() != backends.SeverityNone+5 {
		t.Errorf("worst severity %v, want critical", sb.WorstSeverity())
	}
}

// The cluster's RuntimeClasses reach live posture: the test cluster offers gVisor ("gvisor",
// handler "runsc"), so a release without a runtime class is K8S-H18 at the policy's grade, not
// the INFO an engine with no sandboxed runtime gets.
func TestClusterRuntimeClassesGradeTheRuntimeRule(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	got := b.runtimeClasses(context.Background())
	if !slices.Contains(got, "gvisor") || !slices.Contains(got, "runsc") {
		t.Fatalf("runtime classes %v, want the test cluster's gvisor/runsc", got)
	}
	for _, tc := range []struct {
		policy catalog.RuntimePolicy
		want   catalog.Severity
	}{{"", catalog.SeverityMedium}, {catalog.RuntimeRequired, catalog.SeverityHigh}, {catalog.RuntimeOff, catalog.SeverityInfo}} {
		p := hardenedPod()
		p.Spec.RuntimeClassName = nil
		var sev catalog.Severity
		for _, f := range newSpecTable(PostureOptions{RuntimePolicy: tc.policy, RuntimeClasses: got}).intern(&p.Spec).posture() {
			if f.RuleID == "K8S-H18" {
				sev = f.Severity
			}
		}
		if sev != tc.want {
			t.Errorf("policy %q: K8S-H18 %s, want %s", tc.policy, sev, tc.want)
		}
	}
}

func TestClusterTeardown(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	a := release{name: newReleaseName(), task: "t", sample: "a"}
	keep := release{name: newReleaseName(), task: "t", sample: "keep"}
	plain := release{name: newReleaseName()}
	for _, r := range []release{a, keep, plain} {
		install(t, b, ns, r)
	}
	id := func(r release) string { return b.Name() + "/" + ns + "/" + r.name }
	f := newFleet()
	watch(t, b, f)
	f.wait(t, 90*time.Second, "three running releases", func(m map[string]backends.Sandbox) bool {
		return allRunning(m[id(a)], 1) && allRunning(m[id(keep)], 1) && allRunning(m[id(plain)], 1)
	})
	keepBefore, _ := f.get(id(keep))
	ctx := context.Background()

	if err := b.Teardown(ctx, id(plain), backends.TeardownOptions{}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Errorf("teardown of a non-Inspect release: err = %v, want ErrNotSandbox", err)
	}
	if err := b.Teardown(ctx, id(a), backends.TeardownOptions{Timeout: 2 * time.Minute}); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	f.wait(t, 60*time.Second, "the torn-down release to disappear", func(m map[string]backends.Sandbox) bool {
		_, ok := m[id(a)]
		return !ok
	})
	assertReleaseGone(t, c, ns, a.name)
	keepAfter, _ := f.get(id(keep))
	if keepAfter.Members[0].ID != keepBefore.Members[0].ID || !allRunning(keepAfter, 1) {
		t.Errorf("the other release changed: before %+v after %+v", keepBefore.Members, keepAfter.Members)
	}
	if _, ok := f.get(id(plain)); !ok {
		t.Errorf("the non-Inspect release disappeared")
	}

	// Fallback: with its Helm record gone, only the release's labelled/annotated objects go.
	if err := c.Client.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "owner=helm,name=" + keep.name}); err != nil {
		t.Fatal(err)
	}
	if err := b.Teardown(ctx, id(keep), backends.TeardownOptions{}); err != nil {
		t.Fatalf("teardown without a Helm record: %v", err)
	}
	f.wait(t, 60*time.Second, "the record-less release to disappear", func(m map[string]backends.Sandbox) bool {
		_, ok := m[id(keep)]
		return !ok
	})
	assertReleaseGone(t, c, ns, keep.name)
	if sts, err := c.Client.AppsV1().StatefulSets(ns).Get(ctx, "agent-env-"+plain.name+"-default", metav1.GetOptions{}); err != nil || sts.DeletionTimestamp != nil {
		t.Errorf("the unrelated release's StatefulSet was touched: %v", err)
	}

	// Bulk: two releases and one unknown ID.
	d, e := release{name: newReleaseName(), task: "t", sample: "d"}, release{name: newReleaseName(), task: "t", sample: "e"}
	install(t, b, ns, d)
	install(t, b, ns, e)
	// Bulk, the way the action layer fans out: every teardown at once; the backend bounds them.
	bulk := []string{id(d), id(e), b.Name() + "/" + ns + "/nosuchrel"}
	res := make(map[string]error, len(bulk))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, sid := range bulk {
		wg.Go(func() {
			err := b.Teardown(ctx, sid, backends.TeardownOptions{Timeout: 2 * time.Minute})
			mu.Lock()
			res[sid] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	if res[id(d)] != nil || res[id(e)] != nil || !errors.Is(res[b.Name()+"/"+ns+"/nosuchrel"], backends.ErrNotFound) {
		t.Errorf("bulk teardown results: %v", res)
	}
	assertReleaseGone(t, c, ns, d.name)
	assertReleaseGone(t, c, ns, e.name)
}

// assertReleaseGone checks that nothing of the release is left: Helm records, StatefulSets,
// ConfigMaps, Cilium policies (pods are finalised asynchronously by the garbage collector).
func assertReleaseGone(t *testing.T, c *kubetest.Cluster, ns, rel string) {
	t.Helper()
	ctx := context.Background()
	if l, _ := c.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + rel}); len(l.Items) != 0 {
		t.Errorf("%s: %d Helm records left", rel, len(l.Items))
	}
	sts, _ := c.Client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	for _, s := range sts.Items {
		if strings.Contains(s.Name, rel) && s.DeletionTimestamp == nil {
			t.Errorf("%s: StatefulSet %s left", rel, s.Name)
		}
	}
	cms, _ := c.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	for _, cm := range cms.Items {
		if strings.Contains(cm.Name, rel) {
			t.Errorf("%s: ConfigMap %s left", rel, cm.Name)
		}
	}
	b := testBackend(t, c, nil, ns)
	pols, err := b.dyn.Resource(ciliumGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pols.Items {
		if strings.Contains(p.GetName(), rel) {
			t.Errorf("%s: CiliumNetworkPolicy %s left", rel, p.GetName())
		}
	}
}

func TestClusterReset(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "t", sample: "r", services: []string{"default", "victim"}}
	install(t, b, ns, r)
	sid := b.Name() + "/" + ns + "/" + r.name
	f := newFleet()
	watch(t, b, f)
	f.wait(t, 90*time.Second, "two running members", func(m map[string]backends.Sandbox) bool { return allRunning(m[sid], 2) })
	before, _ := f.get(sid)
	old := map[string]bool{}
	for _, m := range before.Members {
		old[m.ID] = true
	}
	if err := b.Reset(context.Background(), sid); err != nil {
		t.Fatalf("reset: %v", err)
	}
	f.wait(t, 90*time.Second, "fresh running pods", func(m map[string]backends.Sandbox) bool {
		sb := m[sid]
		if !allRunning(sb, 2) {
			return false
		}
		for _, mem := range sb.Members {
			if old[mem.ID] {
				return false
			}
		}
		return true
	})
	if err := b.Reset(context.Background(), b.Name()+"/"+ns+"/nosuchrel"); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("reset of an unknown release: %v, want ErrNotFound", err)
	}
}

func TestClusterExecAndCopy(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "t", sample: "x"}
	install(t, b, ns, r)
	sid := b.Name() + "/" + ns + "/" + r.name
	f := newFleet()
	watch(t, b, f)
	f.wait(t, 90*time.Second, "a running member", func(m map[string]backends.Sandbox) bool { return allRunning(m[sid], 1) })
	ctx := context.Background()

	// kwok's ClusterExec runs the command as a local process: this tests the pods/exec
	// plumbing (URL, streams, exit codes), not in-container behaviour.
	cases := []struct {
		name           string
		req            backends.ExecRequest
		stdout, stderr string
		code           int
		timedOut       bool
	}{
		{"streams and exit code", backends.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, "out\n", "err\n", 3, false},
		{"stdin", backends.ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("from stdin")}, "from stdin", "", 0, false},
		{"env and workdir", backends.ExecRequest{Cmd: []string{"sh", "-c", `echo "$RK_VAR"; pwd`}, Env: []string{"RK_VAR=it's set"}, WorkDir: "/"}, "it's set\n/\n", "", 0, false},
		{"member by service", backends.ExecRequest{Member: "default", Cmd: []string{"true"}}, "", "", 0, false},
		{"timeout", backends.ExecRequest{Cmd: []string{"sleep", "5"}, Timeout: time.Second}, "", "", 124, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := b.Exec(ctx, sid, tc.req)
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			if string(res.Stdout) != tc.stdout || string(res.Stderr) != tc.stderr || res.ExitCode != tc.code || res.TimedOut != tc.timedOut {
				t.Errorf("got stdout %q stderr %q code %d timedOut %v; want %q %q %d %v",
					res.Stdout, res.Stderr, res.ExitCode, res.TimedOut, tc.stdout, tc.stderr, tc.code, tc.timedOut)
			}
		})
	}
	if _, err := b.Exec(ctx, sid, backends.ExecRequest{Member: "nosuch", Cmd: []string{"true"}}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("exec in an unknown member: %v, want ErrNotFound", err)
	}

	data := make([]byte, 300<<10)
	_, _ = rand.Read(data)
	dst := filepath.Join(c.ExecDir, "rk-probe", "probe.bin")
	if err := b.CopyTo(ctx, sid, "", dst, data, 0o750); err != nil {
		t.Fatalf("copy to: %v", err)
	}
	st, err := os.Stat(dst)
	if err != nil || st.Mode().Perm() != 0o750 {
		t.Fatalf("copied file: %v, mode %v", err, st.Mode())
	}
	back, err := b.CopyFrom(ctx, sid, "", dst)
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("copy from: %v (got %d bytes, want %d)", err, len(back), len(data))
	}
	if _, err := b.CopyFrom(ctx, sid, "", filepath.Join(c.ExecDir, "missing")); err == nil || !strings.Contains(err.Error(), "exit 1") {
		t.Errorf("copy of a missing file: %v", err)
	}
}

// TestClusterWatchRecovers cuts the backend's connections (a dropped watch: the informers
// resume by themselves), then takes the API server away (Watch must return an error), changes
// the fleet meanwhile, and re-watches like the supervisor: the reset holds no ghost and no
// duplicate.
func TestClusterWatchRecovers(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	direct := testBackend(t, c, nil, ns)
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := newTCPProxy(t, u.Host)
	rc := rest.CopyConfig(c.Config)
	rc.Host = "https://" + p.addr
	b, err := NewForConfig("envtest", rc, Options{Namespaces: []string{ns}, HealthInterval: 2 * time.Second, Uninstaller: helmClient(t, rc)})
	if err != nil {
		t.Fatal(err)
	}
	id := func(r release) string { return b.Name() + "/" + ns + "/" + r.name }

	r1 := release{name: newReleaseName(), task: "t", sample: "1"}
	install(t, direct, ns, r1)
	f := newFleet()
	done, _ := watch(t, b, f)
	f.wait(t, 90*time.Second, "r1", func(m map[string]backends.Sandbox) bool { return allRunning(m[id(r1)], 1) })

	p.dropAll()
	r2 := release{name: newReleaseName(), task: "t", sample: "2"}
	install(t, direct, ns, r2)
	f.wait(t, 90*time.Second, "r2 after the dropped watch", func(m map[string]backends.Sandbox) bool {
		return len(m) == 2 && allRunning(m[id(r2)], 1)
	})
	select {
	case err := <-done:
		t.Fatalf("Watch ended on a dropped connection: %v", err)
	default:
	}

	p.stop()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("Watch ended with %v, want an unreachable error", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Watch did not report the unreachable API server")
	}
	if err := direct.Teardown(context.Background(), id(r1), backends.TeardownOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	r3 := release{name: newReleaseName(), task: "t", sample: "3"}
	install(t, direct, ns, r3)
	if err := p.restart(); err != nil {
		t.Fatal(err)
	}
	resets := 0
	f.mu.Lock()
	for _, e := range f.events {
		if e.Type == backends.EventReset {
			resets++
		}
	}
	f.mu.Unlock()
	watch(t, b, f)
	f.wait(t, 90*time.Second, "exactly r2 and r3 after reconnecting", func(m map[string]backends.Sandbox) bool {
		_, ghost := m[id(r1)]
		return len(m) == 2 && !ghost && allRunning(m[id(r2)], 1) && allRunning(m[id(r3)], 1)
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, e := range f.events {
		if e.Type == backends.EventReset {
			n++
		}
	}
	if n != resets+1 {
		t.Errorf("reconnecting sent %d resets, want 1", n-resets)
	}
}

func TestClusterRBACForbidden(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	kcPath, err := c.UserKubeconfig("rk-nobody") // a user with no RBAC bindings at all
	if err != nil {
		t.Fatal(err)
	}
	bs, err := New(config.KubernetesConfig{Kubeconfig: kcPath, Contexts: []string{"envtest"}, Namespaces: []string{ns}}, "")
	if err != nil {
		t.Fatal(err)
	}
	err = bs[0].Watch(context.Background(), func(backends.Event) {})
	if err == nil || !strings.Contains(err.Error(), `RBAC forbids list pods in namespace "`+ns+`"`) {
		t.Errorf("Watch as a user without rights: %v", err)
	}
}

package kubernetes

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
)

// listGate holds back the listing and watching of one resource (not the one-item permission
// check) until opened, as a slow stream does at 25,000 releases.
type listGate struct {
	resource string // the URL path's last element: "ciliumnetworkpolicies", "secrets"
	next     http.RoundTripper
	open     chan struct{}
	held     atomic.Int32
}

// gatedBackend is a backend for ns whose lists of resource wait for the returned gate.
func gatedBackend(t *testing.T, c *kubetest.Cluster, ns, resource string) (*Backend, *listGate) {
	gate := &listGate{resource: resource, open: make(chan struct{})}
	rc := rest.CopyConfig(c.Config)
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { gate.next = rt; return gate }
	return testBackend(t, c, rc, ns), gate
}

// waitHeld fails the test unless a list of the gate's resource is held back within 30 s.
func (g *listGate) waitHeld(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); g.held.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the %s list was never held back: the test proves nothing", g.resource)
		}
	}
}

func (g *listGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/"+g.resource) && req.URL.Query().Get("limit") != "1" {
		g.held.Add(1)
		select {
		case <-g.open:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return g.next.RoundTrip(req)
}

// The table does not wait for the slowest stream: with the policies still listing, the first
// reset carries every release with its posture marked pending and no policy verdict (no false
// K8S-N01); once the policies have listed, a second reset brings the complete posture.
func TestFirstResetDoesNotWaitForPolicies(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	plain := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "ctf_pending", sample: "s-pending"}
	install(t, plain, ns, r)
	// Without its policy the release is K8S-N01 once the policies are known.
	ctx := context.Background()
	pols, err := plain.dyn.Resource(ciliumGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pols.Items) == 0 {
		t.Fatalf("the release's policies: %v (%d)", err, len(pols.Items))
	}
	for _, p := range pols.Items {
		if err := plain.dyn.Resource(ciliumGVR).Namespace(ns).Delete(ctx, p.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	b, gate := gatedBackend(t, c, ns, "ciliumnetworkpolicies")
	f := newFleet()
	watch(t, b, f)
	sid := "k8s:envtest/" + ns + "/" + r.name
	f.wait(t, 90*time.Second, "the release, policies held back", func(m map[string]backends.Sandbox) bool { _, ok := m[sid]; return ok })
	sb, _ := f.get(sid)
	gate.waitHeld(t) // the policies list right after the first table
	if sb.PosturePending == "" || slices.ContainsFunc(sb.Findings, func(fd backends.Finding) bool { return fd.RuleID == "K8S-N01" }) {
		t.Fatalf("first table: pending %q, findings %v; want pending and no policy verdict", sb.PosturePending, sb.Findings)
	}
	if !slices.ContainsFunc(sb.Findings, func(fd backends.Finding) bool { return fd.RuleID == "K8S-H06" }) {
		t.Errorf("first table lacks the pods' own findings: %v", sb.Findings)
	}
	close(gate.open)
	f.wait(t, 60*time.Second, "the complete posture", func(m map[string]backends.Sandbox) bool {
		s := m[sid]
		return s.PosturePending == "" && slices.ContainsFunc(s.Findings, func(fd backends.Finding) bool { return fd.RuleID == "K8S-N01" })
	})
	f.mu.Lock()
	resets := 0
	for _, e := range f.events {
		if e.Type == backends.EventReset {
			resets++
		}
	}
	f.mu.Unlock()
	if resets != 2 {
		t.Errorf("%d resets, want 2 (pending, then complete)", resets)
	}
}

// The fleet is the first event, even when a member pod changes while the informers are still
// listing (here: a pod deleted while the Helm records are held back): the reset carries the state
// the change led to, and no activity runs ahead of it.
func TestNoActivityBeforeTheFirstReset(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	plain := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "ctf_early", sample: "s-early", services: []string{"default", "victim"}}
	install(t, plain, ns, r)

	b, gate := gatedBackend(t, c, ns, "secrets")
	f := newFleet()
	watch(t, b, f)
	gate.waitHeld(t)
	time.Sleep(time.Second) // the pod informer, not held, has listed by now
	ctx := context.Background()
	pods, err := plain.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + r.name})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("the release's pods: %v (%d)", err, len(pods.Items))
	}
	zero := int64(0)
	if err := plain.cs.CoreV1().Pods(ns).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the deletion reaches the pod informer while the records are held
	close(gate.open)
	sid := "k8s:envtest/" + ns + "/" + r.name
	f.wait(t, 60*time.Second, "the release", func(m map[string]backends.Sandbox) bool { _, ok := m[sid]; return ok })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.events[0].Type != backends.EventReset {
		t.Fatalf("first event is %v, want the reset", f.events[0].Type)
	}
}

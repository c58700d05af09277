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

// policyGate holds back the listing and watching of CiliumNetworkPolicies (not the one-item
// permission check) until opened, as a slow policy stream does at 25,000 releases.
type policyGate struct {
	next http.RoundTripper
	open chan struct{}
	held atomic.Int32
}

func (g *policyGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/ciliumnetworkpolicies") && req.URL.Query().Get("limit") != "1" {
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

	gate := &policyGate{open: make(chan struct{})}
	rc := rest.CopyConfig(c.Config)
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { gate.next = rt; return gate }
	b := testBackend(t, c, rc, ns)
	f := newFleet()
	watch(t, b, f)
	sid := "k8s:envtest/" + ns + "/" + r.name
	f.wait(t, 90*time.Second, "the release, policies held back", func(m map[string]backends.Sandbox) bool { _, ok := m[sid]; return ok })
	sb, _ := f.get(sid)
	if gate.held.Load() == 0 {
		t.Fatal("the policy list was never held back: the test proves nothing")
	}
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

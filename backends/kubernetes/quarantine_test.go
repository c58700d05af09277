package kubernetes

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
	rkwatch "github.com/rangekeeper/rangekeeper/watch"
)

// Deleting a release's CiliumNetworkPolicy raises a drift alert; quarantine creates a deny-all
// ingress+egress NetworkPolicy (and a Cilium policy, the test cluster serving the CRD) labelled
// as ours selecting the release's pods; release deletes exactly those, leaving an operator's
// policy in the same namespace alone.
func TestCiliumPolicyDeletedAlertsQuarantineDenyAllReleaseRemovesIt(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "ctf_q", sample: "3f1c2a9e-0q01"}
	install(t, b, ns, r)
	id := "k8s:envtest/" + ns + "/" + r.name
	ctx, cancel := context.WithCancel(context.Background())
	sup := supervisor.New([]backends.Backend{b}, supervisor.Backoff{Min: 50 * time.Millisecond, Max: time.Second})
	wait := sup.Start(ctx)
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := rkwatch.New(sup, db, rkwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; wait(); db.Close() })
	until(t, 90*time.Second, "the release's baseline", func() bool {
		bs, _ := db.Baselines()
		for _, bl := range bs {
			if bl.SandboxID == id {
				return true
			}
		}
		return false
	})
	pols, err := b.dyn.Resource(ciliumGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pols.Items) == 0 {
		t.Fatalf("the chart made no CiliumNetworkPolicy (%v)", err)
	}
	for _, p := range pols.Items {
		if err := b.dyn.Resource(ciliumGVR).Namespace(ns).Delete(ctx, p.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var alert state.Alert
	until(t, 30*time.Second, "the drift alert", func() bool {
		as, _ := db.Alerts(state.AlertQuery{SandboxID: id})
		for _, a := range as {
			if a.Kind == state.AlertDrift && a.Rule == "K8S-N01" {
				alert = a
				return true
			}
		}
		return false
	})
	t.Logf("alert: %s (event %+v)", alert.Summary, alert.Event)

	// An operator's own policy in the namespace: release must leave it.
	theirs := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "operators-own", Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	if _, err := c.Client.NetworkingV1().NetworkPolicies(ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var saved []byte
	if err := b.Quarantine(ctx, id, func(p []byte) error { saved = p; return nil }); err != nil {
		t.Fatal(err)
	}
	var plan k8sQuarantinePlan
	if err := json.Unmarshal(saved, &plan); err != nil || plan.CiliumPolicy == "" {
		t.Fatalf("plan %s (%v): want the NetworkPolicy and, the CRD being served, the Cilium policy", saved, err)
	}
	np, err := c.Client.NetworkingV1().NetworkPolicies(ns).Get(ctx, plan.NetworkPolicy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if np.Labels[LabelQuarantine] != r.name || np.Spec.PodSelector.MatchLabels[LabelInstance] != r.name ||
		len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Ingress) != 0 || len(np.Spec.Egress) != 0 {
		t.Errorf("quarantine policy %+v: want ours, selecting the release, ingress+egress with no rule", np)
	}
	cnp, err := b.dyn.Resource(ciliumGVR).Namespace(ns).Get(ctx, plan.CiliumPolicy, metav1.GetOptions{})
	if err != nil || cnp.GetLabels()[LabelQuarantine] != r.name {
		t.Fatalf("cilium quarantine policy %v (%v)", cnp, err)
	}
	if err := b.Release(ctx, id, saved); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.NetworkingV1().NetworkPolicies(ns).Get(ctx, plan.NetworkPolicy, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("quarantine NetworkPolicy after release: %v, want gone", err)
	}
	if _, err := b.dyn.Resource(ciliumGVR).Namespace(ns).Get(ctx, plan.CiliumPolicy, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("quarantine Cilium policy after release: %v, want gone", err)
	}
	if _, err := c.Client.NetworkingV1().NetworkPolicies(ns).Get(ctx, "operators-own", metav1.GetOptions{}); err != nil {
		t.Errorf("release touched the operator's policy: %v", err)
	}
}

func until(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not within %s: %s", within, what)
}

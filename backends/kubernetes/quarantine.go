package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rangekeeper/rangekeeper/backends"
)

// LabelQuarantine marks the policies a quarantine created (value: the release), so release
// deletes exactly those and nothing a chart or an operator made.
const LabelQuarantine = "dev.rangekeeper.quarantine"

// k8sQuarantinePlan names the policies a quarantine created.
type k8sQuarantinePlan struct {
	Namespace     string `json:"namespace"`
	Release       string `json:"release"`
	NetworkPolicy string `json:"network_policy"`
	CiliumPolicy  string `json:"cilium_policy,omitempty"` // "" when the cluster has no Cilium API
}

func quarantineName(release string) string {
	n := "rangekeeper-quarantine-" + release
	if len(n) > 253 {
		n = n[:253]
	}
	return n
}

// Quarantine adds a deny-all ingress and egress NetworkPolicy (and a Cilium policy denying every
// entity, where the API exists) selecting the release's pods; the pods keep running.
func (b *Backend) Quarantine(ctx context.Context, sandboxID string, save func(plan []byte) error) error {
	t, err := b.resolve(ctx, sandboxID)
	if err != nil {
		return err
	}
	if !t.inspect {
		return fmt.Errorf("%s: release %s/%s: %w", b.Name(), t.ns, t.release, backends.ErrNotSandbox)
	}
	name := quarantineName(t.release)
	plan := k8sQuarantinePlan{Namespace: t.ns, Release: t.release, NetworkPolicy: name}
	cilium := b.hasCilium(ctx)
	if cilium {
		plan.CiliumPolicy = name
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	if err := save(raw); err != nil {
		return fmt.Errorf("quarantine %s: record not saved, nothing changed: %w", sandboxID, err)
	}
	labels := map[string]string{LabelQuarantine: t.release, "app.kubernetes.io/managed-by": "rangekeeper"}
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.ns, Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelInstance: t.release}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			// No ingress or egress rules: nothing in, nothing out.
		},
	}
	backends.Progress(ctx, "create NetworkPolicy %s/%s (deny all)", t.ns, name)
	if _, err := b.cs.NetworkingV1().NetworkPolicies(t.ns).Create(ctx, np, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return b.explainAPIError("create", "networkpolicies", t.ns, err)
	}
	if !cilium {
		return nil
	}
	cnp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
		"metadata": map[string]any{"name": name, "namespace": t.ns, "labels": toAny(labels)},
		"spec": map[string]any{
			"endpointSelector": map[string]any{"matchLabels": map[string]any{LabelInstance: t.release}},
			"ingressDeny":      []any{map[string]any{"fromEntities": []any{"all"}}},
			"egressDeny":       []any{map[string]any{"toEntities": []any{"all"}}},
		},
	}}
	backends.Progress(ctx, "create CiliumNetworkPolicy %s/%s (deny all)", t.ns, name)
	if _, err := b.dyn.Resource(ciliumGVR).Namespace(t.ns).Create(ctx, cnp, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return b.explainAPIError("create", "ciliumnetworkpolicies", t.ns, err)
	}
	return nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Release deletes exactly the policies the quarantine created: each must still carry our label
// for this release, and each delete is pinned to the UID read.
func (b *Backend) Release(ctx context.Context, sandboxID string, raw []byte) error {
	var plan k8sQuarantinePlan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return fmt.Errorf("release %s: unreadable quarantine record: %w", sandboxID, err)
	}
	if ns, rel, err := b.parseID(sandboxID); err != nil || ns != plan.Namespace || rel != plan.Release {
		return fmt.Errorf("release %s: the quarantine record is for %s/%s", sandboxID, plan.Namespace, plan.Release)
	}
	var errs []error
	np, err := b.cs.NetworkingV1().NetworkPolicies(plan.Namespace).Get(ctx, plan.NetworkPolicy, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		errs = append(errs, b.explainAPIError("get", "networkpolicies", plan.Namespace, err))
	case np.Labels[LabelQuarantine] != plan.Release:
		errs = append(errs, fmt.Errorf("NetworkPolicy %s/%s is not the quarantine's (label %s missing): not deleted", plan.Namespace, plan.NetworkPolicy, LabelQuarantine))
	default:
		uid := np.UID
		backends.Progress(ctx, "delete NetworkPolicy %s/%s", plan.Namespace, plan.NetworkPolicy)
		if err := b.cs.NetworkingV1().NetworkPolicies(plan.Namespace).Delete(ctx, plan.NetworkPolicy, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, b.explainAPIError("delete", "networkpolicies", plan.Namespace, err))
		}
	}
	if plan.CiliumPolicy != "" {
		c, err := b.dyn.Resource(ciliumGVR).Namespace(plan.Namespace).Get(ctx, plan.CiliumPolicy, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, b.explainAPIError("get", "ciliumnetworkpolicies", plan.Namespace, err))
		case c.GetLabels()[LabelQuarantine] != plan.Release:
			errs = append(errs, fmt.Errorf("CiliumNetworkPolicy %s/%s is not the quarantine's: not deleted", plan.Namespace, plan.CiliumPolicy))
		default:
			uid := c.GetUID()
			backends.Progress(ctx, "delete CiliumNetworkPolicy %s/%s", plan.Namespace, plan.CiliumPolicy)
			if err := b.dyn.Resource(ciliumGVR).Namespace(plan.Namespace).Delete(ctx, plan.CiliumPolicy, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, b.explainAPIError("delete", "ciliumnetworkpolicies", plan.Namespace, err))
			}
		}
	}
	return errors.Join(errs...)
}

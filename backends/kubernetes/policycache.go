package kubernetes

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachedPolicy is what the policy informer keeps of a CiliumNetworkPolicy: which release it
// selects and, per egress rule, the destinations policyFindings judges. The chart's policy
// decoded as unstructured JSON (description, DNS rules, endpoint selectors, ports) is kilobytes
// of maps; this is a few strings.
type cachedPolicy struct {
	metav1.ObjectMeta // name, namespace, UID, resource version
	release           string
	hasEgress         bool // spec.egress is present (even with no rule we judge)
	egress            []egressRule
}

// egressRule is one spec.egress entry's destinations.
type egressRule struct {
	entities, cidrs, domains []string
}

func (p *cachedPolicy) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *cachedPolicy) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// cachePolicy is the policy informer's transform (idempotent).
func cachePolicy(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	return policyOf(u), nil
}

func policyOf(u *unstructured.Unstructured) *cachedPolicy {
	p := &cachedPolicy{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()}}
	p.release, _, _ = unstructured.NestedString(u.Object, "spec", "endpointSelector", "matchLabels", LabelInstance)
	egress, found, _ := unstructured.NestedSlice(u.Object, "spec", "egress")
	p.hasEgress = found
	for _, r := range egress {
		rule, _ := r.(map[string]any)
		er := egressRule{entities: stringsAt(rule, "toEntities"), cidrs: stringsAt(rule, "toCIDR")}
		if fq, ok := rule["toFQDNs"].([]any); ok {
			for _, d := range fq {
				dm, _ := d.(map[string]any)
				if s, _ := dm["matchPattern"].(string); s != "" {
					er.domains = append(er.domains, unique.Make(s).Value())
				} else if s, _ := dm["matchName"].(string); s != "" {
					er.domains = append(er.domains, unique.Make(s).Value())
				}
			}
		}
		if len(er.entities)+len(er.cidrs)+len(er.domains) > 0 {
			p.egress = append(p.egress, er)
		}
	}
	return p
}

// policiesOf converts unstructured policies (Posture's callers, tests).
func policiesOf(us []*unstructured.Unstructured) []*cachedPolicy {
	out := make([]*cachedPolicy, len(us))
	for i, u := range us {
		out[i] = policyOf(u)
	}
	return out
}

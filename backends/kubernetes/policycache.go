package kubernetes

import (
	"strings"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachedPolicy is what the policy informer keeps of a CiliumNetworkPolicy: which release it
// selects and, per egress rule, the destinations policyFindings judges. The chart's policy
// decoded as unstructured JSON (description, DNS rules, endpoint selectors, ports) is kilobytes
// of maps; this is a few strings.
type cachedPolicy struct {
	slimMeta  // name, namespace, UID, resource version
	release   string
	hasEgress bool // spec.egress is present (even with no rule we judge)
	egress    []egressRule
}

// egressRule is one spec.egress entry's destinations.
type egressRule struct {
	entities, cidrs, domains []string
}

func (p *cachedPolicy) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *cachedPolicy) DeepCopyObject() runtime.Object {
	c := *p
	c.slimMeta = p.slimMeta.deepCopy()
	return &c
}

// cachePolicy is the policy informer's transform (idempotent): a policy as policyOf reads it,
// with the egress rules interned. The releases of one task carry the same policy, so their
// rules are kept once (at 50,000 pods, 25,000 policies' rules and their strings were a tenth of
// the heap). The rules are never modified once cached.
func (t *specTable) cachePolicy(obj any) (any, error) {
	var p *cachedPolicy
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		p = policyOf(o)
	case *cachedPolicy: // decoded by policyListWatch
		p = o
	default:
		return obj, nil
	}
	p.egress = t.egressRules(p.egress)
	return p, nil
}

func (t *specTable) egressRules(rules []egressRule) []egressRule {
	if len(rules) == 0 {
		return nil
	}
	var key strings.Builder
	for _, r := range rules {
		for _, list := range [][]string{r.entities, r.cidrs, r.domains} {
			for _, s := range list {
				key.WriteString(s)
				key.WriteByte(0)
			}
			key.WriteByte(1)
		}
		key.WriteByte(2)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if shared, ok := t.egress[key.String()]; ok {
		return shared
	}
	if len(t.egress) >= maxSpecs {
		clear(t.egress)
	}
	t.egress[key.String()] = rules
	return rules
}

// addDomain adds a toFQDNs entry's destination: its pattern, else its name (none when both are
// empty), interned.
func (er *egressRule) addDomain(pattern, name string) {
	if pattern != "" {
		er.domains = append(er.domains, unique.Make(pattern).Value())
	} else if name != "" {
		er.domains = append(er.domains, unique.Make(name).Value())
	}
}

// addRule keeps an egress rule that names any destination policyFindings judges.
func (p *cachedPolicy) addRule(er egressRule) {
	if len(er.entities)+len(er.cidrs)+len(er.domains) > 0 {
		p.egress = append(p.egress, er)
	}
}

func policyOf(u *unstructured.Unstructured) *cachedPolicy {
	p := &cachedPolicy{slimMeta: slimMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()}}
	p.release, _, _ = unstructured.NestedString(u.Object, "spec", "endpointSelector", "matchLabels", LabelInstance)
	egress, found, _ := unstructured.NestedSlice(u.Object, "spec", "egress")
	p.hasEgress = found
	for _, r := range egress {
		rule, _ := r.(map[string]any)
		er := egressRule{entities: stringsAt(rule, "toEntities"), cidrs: stringsAt(rule, "toCIDR")}
		if fq, ok := rule["toFQDNs"].([]any); ok {
			for _, d := range fq {
				dm, _ := d.(map[string]any)
				pattern, _ := dm["matchPattern"].(string)
				name, _ := dm["matchName"].(string)
				er.addDomain(pattern, name)
			}
		}
		p.addRule(er)
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

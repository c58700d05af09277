package kubernetes

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// policyOfJSON is the road decodePolicy replaces: the whole policy as unstructured, then policyOf.
func policyOfJSON(t testing.TB, raw []byte) *cachedPolicy {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatalf("unstructured: %v", err)
	}
	return policyOf(u)
}

// decodePolicy reads what policyOf reads, for the chart's real policies (with egress opened to
// the world, to DNS names and to CIDRs) and for policies the typed form cannot hold, which take
// the unstructured road.
func TestDecodePolicyAgreesWithPolicyOf(t *testing.T) {
	var inputs [][]byte
	for _, values := range []map[string]any{
		nil,
		{"allowEntities": []any{"world"}},
		{"allowDomains": []any{"example.test", "*.models.test"}, "allowCIDR": []any{"10.1.2.0/24"}},
	} {
		_, pols := renderAgentEnv(t, "rel-a", "ns", values)
		for _, u := range pols {
			raw, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, raw)
		}
	}
	meta := `"apiVersion":"cilium.io/v2","kind":"CiliumNetworkPolicy","metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"7"}`
	for _, spec := range []string{
		`{"endpointSelector":{"matchLabels":{"app.kubernetes.io/instance":"rel"}},"egress":[{"toEntities":["world"]},{"toFQDNs":[{"matchName":"a.test"},{"matchPattern":"*.b.test"},{}]}]}`,
		`{"egress":null}`,
		`{"egress":[]}`,
		`{"egress":[null,{"toCIDR":null},{"toFQDNs":[null]}]}`,
		`{"egress":[{"toEntities":["world",5]}]}`,                               // a number among the entities
		`{"egress":{"toEntities":["world"]}}`,                                   // an object where a list belongs
		`{"endpointSelector":{"matchLabels":{"app.kubernetes.io/instance":7}}}`, // a number as the release
		`{"Egress":[{"toEntities":["world"]}]}`,                                 // field names are case-sensitive
		`"not an object"`,
	} {
		inputs = append(inputs, []byte(`{`+meta+`,"spec":`+spec+`}`))
	}
	inputs = append(inputs, []byte(`{`+meta+`}`))
	for _, raw := range inputs {
		got, err := decodePolicy(raw, false)
		if err != nil {
			t.Errorf("decodePolicy(%s): %v", raw, err)
			continue
		}
		if want := policyOfJSON(t, raw); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("decodePolicy(%s)\n = %+v\nwant %+v", raw, got, want)
		}
	}
	if _, err := decodePolicy([]byte(`{"metadata":`), false); err == nil {
		t.Error("a truncated policy decoded without error")
	}
}

// A bookmark keeps its annotations: the reflector reads the end of the initial events there.
func TestDecodePolicyBookmarkKeepsAnnotations(t *testing.T) {
	raw := []byte(`{"kind":"CiliumNetworkPolicy","apiVersion":"cilium.io/v2","metadata":{"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}`)
	p, err := decodePolicy(raw, true)
	if err != nil || p.ResourceVersion != "42" || p.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Fatalf("bookmark = %+v, %v", p, err)
	}
	if p, _ := decodePolicy(raw, false); p.Annotations != nil {
		t.Errorf("a policy kept annotations it never needs: %v", p.Annotations)
	}
}

// BenchmarkPolicyDecode: one of the chart's policies (domains opened) decoded as the watch
// decodes it, against the unstructured road it replaced.
func BenchmarkPolicyDecode(b *testing.B) {
	_, pols := renderAgentEnv(b, "rel-a", "ns", map[string]any{"allowDomains": []any{"example.test", "*.models.test"}})
	var raw []byte
	for _, u := range pols {
		if r, err := u.MarshalJSON(); err == nil && len(r) > len(raw) {
			raw = r
		}
	}
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := decodePolicy(raw, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unstructured", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			policyOfJSON(b, raw)
		}
	})
}

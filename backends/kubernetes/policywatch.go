package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	sigsjson "sigs.k8s.io/json"

	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

// policyListWatch lists and watches the CiliumNetworkPolicies of ns ("" for all) decoding each
// straight into a cachedPolicy. Through the dynamic client every policy was first built as
// unstructured maps (kilobytes of DNS rules, ports and descriptions the posture never reads):
// at 50,000 pods that decode was 8.5 s of the first 30 s of CPU, after the table was up.
//
// While the operator presses keys (input, when set), the streamed initial list is paced
// (listPace): it follows the pods' list, 25,000 policies at 50,000 pods.
func policyListWatch(rc rest.Interface, ns string, input *inputfirst.Signal) *cache.ListWatch {
	path := []string{"/apis", ciliumGVR.Group, ciliumGVR.Version}
	if ns != "" {
		path = append(path, "namespaces", ns)
	}
	path = append(path, ciliumGVR.Resource)
	req := func(opts *metav1.ListOptions) *rest.Request {
		return rc.Get().AbsPath(path...).VersionedParams(opts, scheme.ParameterCodec).SetHeader("Accept", "application/json")
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			raw, err := req(&opts).DoRaw(ctx)
			if err != nil {
				return nil, err
			}
			return decodePolicyList(raw)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watchapi.Interface, error) {
			opts.Watch = true
			body, err := req(&opts).Stream(ctx)
			if err != nil {
				return nil, err
			}
			return watchapi.NewStreamWatcher(&policyEvents{body: body, dec: json.NewDecoder(body), pace: newListPace(input)},
				apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
		},
	}
}

// policyList is a listed page of policies (the reflector reads its resource version and items).
type policyList struct {
	metav1.ListMeta
	Items []cachedPolicy
}

func (l *policyList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (l *policyList) DeepCopyObject() runtime.Object {
	c := &policyList{Items: make([]cachedPolicy, len(l.Items))}
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*cachedPolicy)
	}
	return c
}

func decodePolicyList(raw []byte) (*policyList, error) {
	var wire struct {
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &wire); err != nil {
		return nil, fmt.Errorf("decode CiliumNetworkPolicy list: %w", err)
	}
	l := &policyList{ListMeta: wire.Metadata, Items: make([]cachedPolicy, 0, len(wire.Items))}
	for _, item := range wire.Items {
		p, err := decodePolicy(item, false)
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, *p)
	}
	return l, nil
}

// policyEvents decodes a watch stream ({"type":…,"object":…} after one another).
type policyEvents struct {
	body io.ReadCloser
	dec  *json.Decoder
	pace listPace
}

func (e *policyEvents) Decode() (watchapi.EventType, runtime.Object, error) {
	var ev struct {
		Type   watchapi.EventType `json:"type"`
		Object json.RawMessage    `json:"object"`
	}
	e.pace.step()
	if err := e.dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	switch ev.Type {
	case watchapi.Error:
		st := &metav1.Status{}
		if err := json.Unmarshal(ev.Object, st); err != nil {
			return "", nil, fmt.Errorf("decode watch error: %w", err)
		}
		return ev.Type, st, nil
	case watchapi.Added, watchapi.Modified, watchapi.Deleted, watchapi.Bookmark:
		p, err := decodePolicy(ev.Object, ev.Type == watchapi.Bookmark)
		if err == nil {
			e.pace.saw(ev.Type, p.Annotations)
		}
		return ev.Type, p, err
	}
	return "", nil, fmt.Errorf("watch of CiliumNetworkPolicies: unknown event type %q", ev.Type)
}

func (e *policyEvents) Close() { _ = e.body.Close() }

// policyWire is what policyOf reads of a policy, as JSON; encoding skips the rest unbuilt.
type policyWire struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             types.UID         `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		EndpointSelector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"endpointSelector"`
		Egress *[]struct {
			ToEntities []string `json:"toEntities"`
			ToCIDR     []string `json:"toCIDR"`
			ToFQDNs    []struct {
				MatchName    string `json:"matchName"`
				MatchPattern string `json:"matchPattern"`
			} `json:"toFQDNs"`
		} `json:"egress"`
	} `json:"spec"`
}

// decodePolicy decodes one policy as policyOf would read it. A policy the typed form cannot hold
// (a value of an unexpected type: the CRD may not be validated) takes the unstructured road, so
// both agree on every input. A bookmark keeps its annotations (the end of the initial events).
func decodePolicy(raw []byte, bookmark bool) (*cachedPolicy, error) {
	var w policyWire
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &w); err != nil {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decode CiliumNetworkPolicy: %w", err)
		}
		p := policyOf(u)
		if bookmark {
			p.Annotations = u.GetAnnotations()
		}
		return p, nil
	}
	m := w.Metadata
	p := &cachedPolicy{slimMeta: slimMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}}
	if bookmark {
		p.Annotations = m.Annotations
	}
	p.release = w.Spec.EndpointSelector.MatchLabels[LabelInstance]
	if w.Spec.Egress == nil {
		return p, nil
	}
	p.hasEgress = true
	for _, r := range *w.Spec.Egress {
		er := egressRule{entities: nonNil(r.ToEntities), cidrs: nonNil(r.ToCIDR)}
		for _, d := range r.ToFQDNs {
			er.addDomain(d.MatchPattern, d.MatchName)
		}
		p.addRule(er)
	}
	return p, nil
}

// nonNil matches stringsAt, which returns an empty, non-nil list.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

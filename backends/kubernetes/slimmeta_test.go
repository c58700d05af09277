package kubernetes

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// The informer's store keys and resumes cached objects through meta.Accessor; a deep copy
// (the store hands copies to handlers that mutate) shares nothing mutable.
func TestSlimMetaServesTheInformerAndCopiesDeeply(t *testing.T) {
	gone := metav1.NewTime(time.Unix(100, 0))
	p := &cachedPod{slimMeta: slimMeta{Name: "agent-env-a-default-0", Namespace: "evals", UID: "u1", ResourceVersion: "42",
		DeletionTimestamp: &gone, Annotations: map[string]string{AnnotationTask: "ctf"}}}
	for _, obj := range []any{p, &cachedPolicy{slimMeta: p.slimMeta}} {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil || key != "evals/agent-env-a-default-0" {
			t.Errorf("%T: key %q, %v", obj, key, err)
		}
		m, err := meta.Accessor(obj)
		if err != nil || m.GetResourceVersion() != "42" || m.GetUID() != "u1" || m.GetLabels() != nil {
			t.Errorf("%T: accessor %v, %v", obj, m, err)
		}
		m.SetLabels(map[string]string{"x": "y"}) // kept nowhere: labels live in labelSet
		m.SetResourceVersion("43")
		if m.GetResourceVersion() != "43" || m.GetLabels() != nil {
			t.Errorf("%T: after sets: rv %q labels %v", obj, m.GetResourceVersion(), m.GetLabels())
		}
	}
	c := p.DeepCopyObject().(*cachedPod)
	c.Annotations[AnnotationTask] = "changed"
	c.DeletionTimestamp.Time = time.Unix(200, 0)
	if p.Annotations[AnnotationTask] != "ctf" || !p.DeletionTimestamp.Equal(&gone) {
		t.Errorf("the copy shares state with the original: %+v", p.slimMeta)
	}
}

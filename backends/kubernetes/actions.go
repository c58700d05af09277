package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultTeardownTimeout matches the order of Inspect's own helm uninstall timeout.
const DefaultTeardownTimeout = 5 * time.Minute

// target is a release resolved from a sandbox ID and checked against the cluster.
type target struct {
	ns, release string
	pods        []corev1.Pod
	helmRecord  bool
	inspect     bool
}

// resolve finds a release's pods and Helm record; ErrNotFound when neither exists.
func (b *Backend) resolve(ctx context.Context, id string) (target, error) {
	ns, rel, err := b.parseID(id)
	if err != nil {
		return target{}, err
	}
	t := target{ns: ns, release: rel}
	pods, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: releaseSelector(rel)})
	if err != nil {
		return t, b.explainAPIError("list", "pods", ns, err)
	}
	t.pods = pods.Items
	for _, p := range t.pods {
		if p.Annotations[AnnotationTask] != "" {
			t.inspect = true
		}
	}
	recs, err := b.md.Resource(secretsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: helmOwnerLabel + "=helm,name=" + rel})
	if err != nil && !apierrors.IsForbidden(err) {
		return t, b.explainAPIError("list", "secrets", ns, err)
	}
	if err == nil && len(recs.Items) > 0 {
		t.helmRecord = true
		items := make([]*metav1.PartialObjectMetadata, len(recs.Items))
		for i := range recs.Items {
			items[i] = &recs.Items[i]
		}
		if r, ok := latestRecord(items); ok && r.Inspect {
			t.inspect = true
		}
	}
	if len(t.pods) == 0 && !t.helmRecord {
		return t, fmt.Errorf("%s: %w: no release %q in namespace %q", b.Name(), backends.ErrNotFound, rel, ns)
	}
	return t, nil
}

// Teardown uninstalls one release the way Inspect does (Helm SDK, wait, timeout: through the Helm
// helper unless Options.Uninstaller names another way). With no Helm record it deletes only the
// objects labelled or annotated as belonging to that release.
func (b *Backend) Teardown(ctx context.Context, sandboxID string, opts backends.TeardownOptions) error {
	t, err := b.resolve(ctx, sandboxID)
	if err != nil {
		return err
	}
	if !t.inspect && !opts.Force {
		return fmt.Errorf("%s: release %s/%s: %w", b.Name(), t.ns, t.release, backends.ErrNotSandbox)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTeardownTimeout
	}
	select { // at most b.workers at once, like Inspect's INSPECT_MAX_HELM_UNINSTALL
	case b.teardowns <- struct{}{}:
		defer func() { <-b.teardowns }()
	case <-ctx.Done():
		return fmt.Errorf("%s: teardown %s/%s: %w", b.Name(), t.ns, t.release, ctx.Err())
	}
	if !t.helmRecord {
		return b.deleteReleaseObjects(ctx, t.ns, t.release)
	}
	found, err := b.uninstaller.UninstallRelease(ctx, t.ns, t.release, timeout)
	if err != nil {
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	if !found { // the record went between resolve and the uninstall
		return b.deleteReleaseObjects(ctx, t.ns, t.release)
	}
	return nil
}

// releaseKinds are the kinds the agent-env chart creates, in deletion order (controllers first
// so they do not recreate pods).
var releaseKinds = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "serviceaccounts"},
	ciliumGVR,
}

// deleteReleaseObjects is the fallback when no Helm record exists. An object belongs to the
// release only if it carries app.kubernetes.io/instance=<release> or Helm's ownership
// annotations for this release and namespace; each delete is pinned to the listed UID.
func (b *Backend) deleteReleaseObjects(ctx context.Context, ns, rel string) error {
	var errs []error
	for _, gvr := range releaseKinds {
		list, err := b.md.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) { // kind not served (e.g. no Cilium)
			continue
		}
		if err != nil {
			errs = append(errs, b.explainAPIError("list", gvr.Resource, ns, err))
			continue
		}
		for _, o := range list.Items {
			if !ownedByRelease(&o, ns, rel) {
				continue
			}
			uid := o.UID
			bg := metav1.DeletePropagationBackground
			err := b.md.Resource(gvr).Namespace(ns).Delete(ctx, o.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &bg})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("%s: delete %s %s/%s: %w", b.Name(), gvr.Resource, ns, o.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

func ownedByRelease(o *metav1.PartialObjectMetadata, ns, rel string) bool {
	if o.Labels[LabelInstance] == rel {
		return true
	}
	return o.Annotations["meta.helm.sh/release-name"] == rel && o.Annotations["meta.helm.sh/release-namespace"] == ns
}

// Reset deletes the release's sandbox pods so their StatefulSets recreate them fresh from the
// image (Kubernetes' honest alternative to a revert). Each delete is pinned to the pod's UID.
func (b *Backend) Reset(ctx context.Context, sandboxID string) error {
	t, err := b.resolve(ctx, sandboxID)
	if err != nil {
		return err
	}
	if !t.inspect {
		return fmt.Errorf("%s: release %s/%s: %w", b.Name(), t.ns, t.release, backends.ErrNotSandbox)
	}
	if len(t.pods) == 0 {
		return fmt.Errorf("%s: release %s/%s has no pods to reset", b.Name(), t.ns, t.release)
	}
	var errs []error
	for _, p := range t.pods {
		if len(p.OwnerReferences) == 0 {
			// A bare pod would not come back: resetting it would be a teardown in disguise.
			errs = append(errs, fmt.Errorf("%s: pod %s/%s has no controller to recreate it; not deleted", b.Name(), p.Namespace, p.Name))
			continue
		}
		uid := p.UID
		err := b.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: delete pod %s/%s: %w", b.Name(), p.Namespace, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

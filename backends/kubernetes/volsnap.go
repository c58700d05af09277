package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// CSI volume snapshots of a release's PersistentVolumeClaims, through the dynamic client so the
// external-snapshotter module is not a dependency.

var (
	volumeSnapshotGVR      = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshots"}
	volumeSnapshotClassGVR = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshotclasses"}
)

const (
	// LabelSnapshot groups the VolumeSnapshots of one rangekeeper snapshot (one per PVC).
	LabelSnapshot = "dev.rangekeeper.snapshot"
	// annotationSnapshotName keeps the operator's name and description (labels cannot hold them).
	annotationSnapshotName = "dev.rangekeeper.snapshot/name"
	annotationSnapshotDesc = "dev.rangekeeper.snapshot/description"
	annotationDefaultClass = "snapshot.storage.kubernetes.io/is-default-class"
	// annotationPVCTemplate keeps the source claim's spec (JSON) so revert can recreate a claim
	// that is already gone.
	annotationPVCTemplate = "dev.rangekeeper.snapshot/pvc"

	// SnapshotTimeout bounds the wait for readyToUse when the caller's context has no deadline.
	SnapshotTimeout = 5 * time.Minute
	// snapCapTTL is how long the cluster-level capability answer is reused by Unsupported.
	snapCapTTL = 30 * time.Second
)

var (
	_ backends.Snapshotter = (*Backend)(nil)
	_ backends.Reverter    = (*Backend)(nil)
)

// releasePVCs lists the release's claims. The agent-env chart labels its PVCs only with the
// chart's `labels` value, so Helm's ownership annotations count as well as the instance label
// (the same rule as teardown's ownedByRelease).
func (b *Backend) releasePVCs(ctx context.Context, ns, rel string) ([]corev1.PersistentVolumeClaim, error) {
	list, err := b.cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, b.explainAPIError("list", "persistentvolumeclaims", ns, err)
	}
	var out []corev1.PersistentVolumeClaim
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && ownedByRelease(&metav1.PartialObjectMetadata{ObjectMeta: p.ObjectMeta}, ns, rel) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// snapshotTarget resolves a sandbox for snapshot/revert and checks the cluster can do it.
func (b *Backend) snapshotTarget(ctx context.Context, sandboxID string, a backends.Action) (target, []corev1.PersistentVolumeClaim, error) {
	t, err := b.resolve(ctx, sandboxID)
	if err != nil {
		return t, nil, err
	}
	if !t.inspect {
		return t, nil, fmt.Errorf("%s: release %s/%s: %w", b.Name(), t.ns, t.release, backends.ErrNotSandbox)
	}
	if why := b.refreshSnapshotCapability(ctx); why != "" {
		return t, nil, fmt.Errorf("%s: %s: %s", b.Name(), a, why)
	}
	pvcs, err := b.releasePVCs(ctx, t.ns, t.release)
	if err != nil {
		return t, nil, err
	}
	if len(pvcs) == 0 {
		return t, nil, fmt.Errorf("%s: %s: release %s/%s has no PersistentVolumeClaims — reset available", b.Name(), a, t.ns, t.release)
	}
	return t, pvcs, nil
}

// newSnapshotID is the operator's name when it is a valid label value, else a generated one.
func newSnapshotID(name string) (string, error) {
	if name != "" {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return "", fmt.Errorf("snapshot name %q: %s", name, strings.Join(errs, "; "))
		}
		if len(name) > 40 { // leaves room for the PVC name in each VolumeSnapshot's name
			return "", fmt.Errorf("snapshot name %q is longer than 40 characters", name)
		}
		return name, nil
	}
	var r [3]byte
	_, _ = rand.Read(r[:])
	return "rk-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:]), nil
}

// snapshotClassFor picks the VolumeSnapshotClass whose driver provisions the PVC's
// StorageClass, else the default-annotated class.
func (b *Backend) snapshotClassFor(ctx context.Context, pvc *corev1.PersistentVolumeClaim, classes []unstructured.Unstructured) (string, error) {
	provisioner := ""
	if sc := pvc.Spec.StorageClassName; sc != nil && *sc != "" {
		s, err := b.cs.StorageV1().StorageClasses().Get(ctx, *sc, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			return "", fmt.Errorf("get storageclass %s: %w", *sc, err)
		}
		if err == nil {
			provisioner = s.Provisioner
		}
	}
	def := ""
	for _, c := range classes {
		driver, _, _ := unstructured.NestedString(c.Object, "driver")
		if provisioner != "" && driver == provisioner {
			return c.GetName(), nil
		}
		if c.GetAnnotations()[annotationDefaultClass] == "true" && def == "" {
			def = c.GetName()
		}
	}
	if def == "" {
		return "", fmt.Errorf("no VolumeSnapshotClass for driver %q of PVC %s and no default class", provisioner, pvc.Name)
	}
	return def, nil
}

// Snapshot creates one VolumeSnapshot per PVC of the release and waits until every one is
// readyToUse, or reports the snapshot controller's error message.
func (b *Backend) Snapshot(ctx context.Context, sandboxID string, opts backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	t, pvcs, err := b.snapshotTarget(ctx, sandboxID, backends.ActionSnapshot)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	id, err := newSnapshotID(opts.Name)
	if err != nil {
		return backends.SnapshotInfo{}, fmt.Errorf("%s: %w", b.Name(), err)
	}
	classes, err := b.dyn.Resource(volumeSnapshotClassGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return backends.SnapshotInfo{}, b.explainAPIError("list", "volumesnapshotclasses", "", err)
	}
	vs := b.dyn.Resource(volumeSnapshotGVR).Namespace(t.ns)
	if existing, err := vs.List(ctx, metav1.ListOptions{LabelSelector: LabelSnapshot + "=" + id}); err == nil && len(existing.Items) > 0 {
		return backends.SnapshotInfo{}, fmt.Errorf("%s: snapshot %q already exists in namespace %q", b.Name(), id, t.ns)
	}
	var names []string
	for i := range pvcs {
		class, err := b.snapshotClassFor(ctx, &pvcs[i], classes.Items)
		if err != nil {
			return backends.SnapshotInfo{}, errors.Join(fmt.Errorf("%s: snapshot %s/%s: %w", b.Name(), t.ns, t.release, err), b.discardSnapshot(t.ns, names))
		}
		name := pvcs[i].Name + "-" + id
		if len(name) > validation.DNS1123SubdomainMaxLength {
			name = name[len(name)-validation.DNS1123SubdomainMaxLength:]
		}
		tmpl, err := json.Marshal(claimTemplate(pvcs[i]))
		if err != nil {
			return backends.SnapshotInfo{}, errors.Join(fmt.Errorf("%s: encode PVC %s: %w", b.Name(), pvcs[i].Name, err), b.discardSnapshot(t.ns, names))
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "snapshot.storage.k8s.io/v1",
			"kind":       "VolumeSnapshot",
			"metadata": map[string]any{
				"name":        name,
				"namespace":   t.ns,
				"labels":      map[string]any{LabelSnapshot: id, LabelInstance: t.release},
				"annotations": map[string]any{annotationSnapshotName: id, annotationSnapshotDesc: opts.Description, annotationPVCTemplate: string(tmpl)},
			},
			"spec": map[string]any{
				"volumeSnapshotClassName": class,
				"source":                  map[string]any{"persistentVolumeClaimName": pvcs[i].Name},
			},
		}}
		if _, err := vs.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return backends.SnapshotInfo{}, errors.Join(b.explainAPIError("create", "volumesnapshots", t.ns, err), b.discardSnapshot(t.ns, names))
		}
		names = append(names, name)
	}
	if err := b.waitSnapshotsReady(ctx, t.ns, names); err != nil {
		return backends.SnapshotInfo{}, errors.Join(err, b.discardSnapshot(t.ns, names))
	}
	infos, err := b.Snapshots(ctx, sandboxID)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	for _, in := range infos {
		if in.ID == id {
			return in, nil
		}
	}
	return backends.SnapshotInfo{}, fmt.Errorf("%s: snapshot %q vanished after it became ready", b.Name(), id)
}

// discardSnapshot deletes the VolumeSnapshots of a snapshot that failed, so no partial
// snapshot is left to revert to. It runs on its own short context: the caller's may be done.
func (b *Backend) discardSnapshot(ns string, names []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, n := range names {
		err := b.dyn.Resource(volumeSnapshotGVR).Namespace(ns).Delete(ctx, n, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: discard VolumeSnapshot %s/%s of the failed snapshot: %w", b.Name(), ns, n, err))
		}
	}
	return errors.Join(errs...)
}

// throttledPastDeadline reports whether err is client-go's rate limiter refusing a request
// whose wait would end after the context's deadline (golang.org/x/time/rate says so at once,
// before the deadline): for a poll bounded by that deadline, the deadline is reached.
func throttledPastDeadline(err error) bool {
	return strings.Contains(err.Error(), "would exceed context deadline")
}

// waitSnapshotsReady polls until every named VolumeSnapshot is readyToUse, one reports an
// error, ctx ends, or SnapshotTimeout passes (when ctx has no deadline of its own).
func (b *Backend) waitSnapshotsReady(ctx context.Context, ns string, names []string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, SnapshotTimeout)
		defer cancel()
	}
	vs := b.dyn.Resource(volumeSnapshotGVR).Namespace(ns)
	pending := append([]string(nil), names...)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	timedOut := func() error {
		cause := ctx.Err()
		if cause == nil { // the client's rate limiter would not wait past the deadline
			cause = context.DeadlineExceeded
		}
		return fmt.Errorf("%s: waiting for VolumeSnapshots %s in %s to become readyToUse: %w", b.Name(), strings.Join(pending, ", "), ns, cause)
	}
	for {
		var still []string
		for _, n := range pending {
			o, err := vs.Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				if ctx.Err() != nil || throttledPastDeadline(err) {
					return timedOut()
				}
				return b.explainAPIError("get", "volumesnapshots", ns, err)
			}
			if msg, _, _ := unstructured.NestedString(o.Object, "status", "error", "message"); msg != "" {
				return fmt.Errorf("%s: VolumeSnapshot %s/%s failed: %s", b.Name(), ns, n, msg)
			}
			if ready, _, _ := unstructured.NestedBool(o.Object, "status", "readyToUse"); !ready {
				still = append(still, n)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return timedOut()
		case <-tick.C:
		}
	}
}

// Snapshots lists the release's VolumeSnapshots made by rangekeeper, grouped by snapshot ID.
func (b *Backend) Snapshots(ctx context.Context, sandboxID string) ([]backends.SnapshotInfo, error) {
	ns, rel, err := b.parseID(sandboxID)
	if err != nil {
		return nil, err
	}
	list, err := b.dyn.Resource(volumeSnapshotGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + rel + "," + LabelSnapshot})
	if apierrors.IsNotFound(err) {
		return nil, nil // the API is not served: there are none
	}
	if err != nil {
		return nil, b.explainAPIError("list", "volumesnapshots", ns, err)
	}
	byID := map[string]*backends.SnapshotInfo{}
	ready := map[string]int{}
	for _, o := range list.Items {
		id := o.GetLabels()[LabelSnapshot]
		in := byID[id]
		if in == nil {
			in = &backends.SnapshotInfo{ID: id, SandboxID: sandboxID, Name: o.GetAnnotations()[annotationSnapshotName], Created: o.GetCreationTimestamp().Time,
				Details: map[string]string{}}
			if in.Name == "" {
				in.Name = id
			}
			if d := o.GetAnnotations()[annotationSnapshotDesc]; d != "" {
				in.Details["description"] = d
			}
			byID[id] = in
		}
		if c := o.GetCreationTimestamp().Time; c.Before(in.Created) {
			in.Created = c
		}
		pvc, _, _ := unstructured.NestedString(o.Object, "spec", "source", "persistentVolumeClaimName")
		in.Members = append(in.Members, pvc)
		if ok, _, _ := unstructured.NestedBool(o.Object, "status", "readyToUse"); ok {
			ready[id]++
		}
		if s, ok, _ := unstructured.NestedString(o.Object, "status", "restoreSize"); ok {
			if q, err := resource.ParseQuantity(s); err == nil {
				in.Size += q.Value()
			}
		}
	}
	out := make([]backends.SnapshotInfo, 0, len(byID))
	for id, in := range byID {
		sort.Strings(in.Members)
		in.Details["ready"] = fmt.Sprintf("%d/%d", ready[id], len(in.Members))
		out = append(out, *in)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Created.Before(out[j].Created) || (out[i].Created.Equal(out[j].Created) && out[i].ID < out[j].ID)
	})
	return out, nil
}

// DeleteSnapshot deletes the release's VolumeSnapshots of one snapshot ID.
func (b *Backend) DeleteSnapshot(ctx context.Context, sandboxID, snapshotID string) error {
	ns, rel, err := b.parseID(sandboxID)
	if err != nil {
		return err
	}
	vs, err := b.snapshotObjects(ctx, ns, rel, snapshotID)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range vs {
		uid := o.GetUID()
		err := b.dyn.Resource(volumeSnapshotGVR).Namespace(ns).Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: delete VolumeSnapshot %s/%s: %w", b.Name(), ns, o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// snapshotObjects lists one snapshot's VolumeSnapshots; ErrNotFound when there are none.
func (b *Backend) snapshotObjects(ctx context.Context, ns, rel, id string) ([]unstructured.Unstructured, error) {
	if errs := validation.IsValidLabelValue(id); len(errs) > 0 || id == "" {
		return nil, fmt.Errorf("%s: %w: invalid snapshot ID %q", b.Name(), backends.ErrNotFound, id)
	}
	list, err := b.dyn.Resource(volumeSnapshotGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + rel + "," + LabelSnapshot + "=" + id})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, b.explainAPIError("list", "volumesnapshots", ns, err)
	}
	if err != nil || len(list.Items) == 0 {
		return nil, fmt.Errorf("%s: %w: no snapshot %q of release %s/%s", b.Name(), backends.ErrNotFound, id, ns, rel)
	}
	return list.Items, nil
}

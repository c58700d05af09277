package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pvcGoneTimeout bounds the wait for a deleted PVC to be finalised before it is recreated.
const pvcGoneTimeout = 2 * time.Minute

// Revert restores the release's PVCs from one snapshot. Helm owns the StatefulSets, so they
// cannot be scaled down; instead the PVCs and the pods are deleted (UID-pinned), each PVC is
// recreated with the same name and spec and a dataSource naming its VolumeSnapshot, and the
// StatefulSets recreate the pods, as Reset does. A PVC that no longer exists (say, a revert
// that failed half-way) is recreated from the copy of its spec kept on the VolumeSnapshot, so
// a revert can simply be retried.
func (b *Backend) Revert(ctx context.Context, sandboxID, snapshotID string, _ backends.RevertOptions) error {
	t, err := b.resolve(ctx, sandboxID)
	if err != nil {
		return err
	}
	if !t.inspect {
		return fmt.Errorf("%s: release %s/%s: %w", b.Name(), t.ns, t.release, backends.ErrNotSandbox)
	}
	if why := b.refreshSnapshotCapability(ctx); why != "" {
		return fmt.Errorf("%s: revert: %s", b.Name(), why)
	}
	objs, err := b.snapshotObjects(ctx, t.ns, t.release, snapshotID)
	if err != nil {
		return err
	}
	pvcs, err := b.releasePVCs(ctx, t.ns, t.release)
	if err != nil {
		return err
	}
	current := map[string]corev1.PersistentVolumeClaim{}
	for _, p := range pvcs {
		current[p.Name] = p
	}
	type restore struct {
		pvc      corev1.PersistentVolumeClaim // the live claim, or the stored template (no UID)
		snapshot string
	}
	var plan []restore
	for _, o := range objs {
		name, _, _ := unstructured.NestedString(o.Object, "spec", "source", "persistentVolumeClaimName")
		if ready, _, _ := unstructured.NestedBool(o.Object, "status", "readyToUse"); !ready {
			return fmt.Errorf("%s: revert: VolumeSnapshot %s/%s of PVC %s is not readyToUse; nothing was changed", b.Name(), t.ns, o.GetName(), name)
		}
		p, ok := current[name]
		if !ok {
			stored, err := storedClaim(o.GetAnnotations()[annotationPVCTemplate])
			if err != nil || stored.Name != name {
				return fmt.Errorf("%s: revert: PVC %s/%s is gone and VolumeSnapshot %s keeps no usable copy of its spec (%v); nothing was changed", b.Name(), t.ns, name, o.GetName(), err)
			}
			p = stored
			p.Namespace = t.ns
		}
		plan = append(plan, restore{pvc: p, snapshot: o.GetName()})
	}
	for _, p := range t.pods {
		if len(p.OwnerReferences) == 0 {
			return fmt.Errorf("%s: revert: pod %s/%s has no controller to recreate it; nothing was changed", b.Name(), p.Namespace, p.Name)
		}
	}
	pvcAPI := b.cs.CoreV1().PersistentVolumeClaims(t.ns)
	// PVCs first: they stay Terminating (pvc-protection) until their pods are gone, and the
	// scheduler does not place a pod whose claim is being deleted.
	for _, r := range plan {
		if r.pvc.UID == "" {
			continue
		}
		uid := r.pvc.UID
		if err := pvcAPI.Delete(ctx, r.pvc.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: revert: delete PVC %s/%s: %w", b.Name(), t.ns, r.pvc.Name, err)
		}
	}
	var errs []error
	for _, p := range t.pods {
		uid := p.UID
		err := b.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: revert: delete pod %s/%s: %w", b.Name(), p.Namespace, p.Name, err))
		}
	}
	for _, r := range plan {
		errs = append(errs, b.recreatePVC(ctx, r.pvc, r.snapshot))
	}
	return errors.Join(errs...)
}

// claimTemplate is what a restored claim keeps of the original: name, labels, user
// annotations, owners and spec, without the binding to the old volume or any data source.
func claimTemplate(p corev1.PersistentVolumeClaim) corev1.PersistentVolumeClaim {
	spec := *p.Spec.DeepCopy()
	spec.VolumeName = ""
	spec.DataSource, spec.DataSourceRef = nil, nil
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels,
			Annotations: userAnnotations(p.Annotations), OwnerReferences: p.OwnerReferences},
		Spec: spec,
	}
}

// storedClaim decodes the claim template kept on a VolumeSnapshot.
func storedClaim(s string) (corev1.PersistentVolumeClaim, error) {
	var p corev1.PersistentVolumeClaim
	if s == "" {
		return p, errors.New("no " + annotationPVCTemplate + " annotation")
	}
	err := json.Unmarshal([]byte(s), &p)
	return p, err
}

// recreatePVC waits for the old claim (when it had one) to be gone and creates it again from
// the snapshot.
func (b *Backend) recreatePVC(ctx context.Context, old corev1.PersistentVolumeClaim, snapshot string) error {
	api := b.cs.CoreV1().PersistentVolumeClaims(old.Namespace)
	wctx, cancel := context.WithTimeout(ctx, pvcGoneTimeout)
	defer cancel()
	for old.UID != "" {
		cur, err := api.Get(wctx, old.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if err == nil && cur.UID != old.UID {
			return fmt.Errorf("%s: revert: PVC %s/%s was recreated by someone else before it could be restored from %s", b.Name(), old.Namespace, old.Name, snapshot)
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("%s: revert: PVC %s/%s was not deleted (still in use?): %w", b.Name(), old.Namespace, old.Name, wctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	apiGroup := volumeSnapshotGVR.Group
	pvc := claimTemplate(old)
	pvc.Namespace = old.Namespace
	pvc.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: &apiGroup, Kind: "VolumeSnapshot", Name: snapshot}
	if _, err := api.Create(ctx, &pvc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: revert: recreate PVC %s/%s from VolumeSnapshot %s: %w", b.Name(), old.Namespace, old.Name, snapshot, err)
	}
	return nil
}

// userAnnotations drops the annotations the PV controller and provisioners set on a bound
// claim; copied onto the new claim they would claim a binding that no longer exists.
func userAnnotations(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if strings.HasPrefix(k, "pv.kubernetes.io/") || strings.HasPrefix(k, "volume.kubernetes.io/") || strings.HasPrefix(k, "volume.beta.kubernetes.io/") {
			continue
		}
		out[k] = v
	}
	return out
}

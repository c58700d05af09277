package kubernetes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

const (
	fakeCSIDriver = "fake.csi.rangekeeper.dev"
	failMarker    = "please fail" // a snapshot description the fake snapshot controller refuses
	stallMarker   = "never ready" // a snapshot description the fake snapshot controller ignores
	fakeFailure   = "fake-csi: driver refused to cut the snapshot"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestClusterVolumeSnapshots walks the capability from "API not served" to "no class" to
// available, then snapshots a release's PVCs, sees a failed snapshot's message, deletes it, and
// reverts. There is no CSI driver or snapshot controller: the test plays the controller.
func TestClusterVolumeSnapshots(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// The release's "data" volume is the chart's own PVC (Helm-annotated, mounted by the
	// default service, of a StorageClass whose provisioner has a VolumeSnapshotClass); a second
	// PVC carries only the instance label and no class, so the default class is chosen for it.
	r := release{name: newReleaseName(), task: "ctf_volumes", sample: "vs-1"}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "rk-fast-" + r.name, Labels: testLabels()}, Provisioner: fakeCSIDriver}
	if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
	r.values = map[string]any{
		"volumes": map[string]any{"data": map[string]any{"spec": map[string]any{
			"storageClassName": sc.Name, "accessModes": []any{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}},
		"services": map[string]any{"default": map[string]any{"image": "python:3.12-bookworm",
			"command": []any{"tail", "-f", "/dev/null"}, "volumes": []any{"data:/data"}}},
	}
	install(t, b, ns, r)
	sid := b.Name() + "/" + ns + "/" + r.name
	dataName := "agent-env-" + r.name + "-data"

	// 1. Without the snapshot CRDs the API is not served.
	if why := b.refreshSnapshotCapability(ctx); !strings.Contains(why, "does not serve") {
		t.Errorf("before the CRDs: reason %q, want 'does not serve'", why)
	}
	if ok, why := backends.Supports(b, backends.ActionSnapshot); ok || !strings.Contains(why, "snapshot: the cluster does not serve") {
		t.Errorf("before the CRDs: Supports = %v, %q", ok, why)
	}

	// 2. With the CRDs but no VolumeSnapshotClass.
	installSnapshotCRDs(t, ctx, dyn)
	waitFor(t, ctx, "the VolumeSnapshot API to be served", func() bool {
		return b.refreshSnapshotCapability(ctx) == "no VolumeSnapshotClass in the cluster"
	})
	if got, want := b.Unsupported(backends.ActionRevert), "revert: no VolumeSnapshotClass in the cluster — reset available"; got != want {
		t.Errorf("Unsupported(revert) = %q, want %q", got, want)
	}
	if _, err := b.Snapshot(ctx, sid, backends.SnapshotOptions{}); err == nil || !strings.Contains(err.Error(), "no VolumeSnapshotClass") {
		t.Errorf("snapshot without a class: %v", err)
	}

	// 3. The fake driver's VolumeSnapshotClass and a default class.
	driverClass := createSnapshotClass(t, ctx, dyn, "rk-driver-"+r.name, fakeCSIDriver, false)
	defaultClass := createSnapshotClass(t, ctx, dyn, "rk-default-"+r.name, "other.csi.example", true)

	if why := b.UnsupportedFor(ctx, b.Name()+"/"+ns+"/nopvcs", backends.ActionSnapshot); !strings.Contains(why, "release has no PersistentVolumeClaims") {
		t.Errorf("release without PVCs: UnsupportedFor = %q", why)
	}
	data, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, dataName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's PVC: %v", err)
	}
	createPVC(t, ctx, c, ns, "cache-"+r.name, r.name, nil)
	if why := b.refreshSnapshotCapability(ctx); why != "" {
		t.Fatalf("with a class: reason %q", why)
	}
	if why := b.UnsupportedFor(ctx, sid, backends.ActionSnapshot); why != "" {
		t.Errorf("with a class and PVCs: UnsupportedFor = %q", why)
	}
	if ok, why := backends.Supports(b, backends.ActionRevert); !ok {
		t.Errorf("with a class: revert unsupported: %s", why)
	}

	go fakeSnapshotController(ctx, dyn, ns)

	// 4. A snapshot: one VolumeSnapshot per PVC, labelled, with the right class and source.
	info, err := b.Snapshot(ctx, sid, backends.SnapshotOptions{Name: "before-exploit", Description: "clean"})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if info.ID != "before-exploit" || strings.Join(info.Members, ",") != dataName+",cache-"+r.name || info.Details["ready"] != "2/2" {
		t.Errorf("snapshot info = %+v", info)
	}
	list, err := dyn.Resource(volumeSnapshotGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelSnapshot + "=before-exploit"})
	if err != nil {
		t.Fatal(err)
	}
	wantClass := map[string]string{dataName: driverClass, "cache-" + r.name: defaultClass}
	for _, o := range list.Items {
		src, _, _ := unstructured.NestedString(o.Object, "spec", "source", "persistentVolumeClaimName")
		class, _, _ := unstructured.NestedString(o.Object, "spec", "volumeSnapshotClassName")
		if class != wantClass[src] || o.GetLabels()[LabelInstance] != r.name {
			t.Errorf("VolumeSnapshot %s: source %q class %q labels %v; want class %q", o.GetName(), src, class, o.GetLabels(), wantClass[src])
		}
	}
	if len(list.Items) != 2 {
		t.Errorf("%d VolumeSnapshots, want 2", len(list.Items))
	}

	// 5. A failing snapshot reports the controller's message; one that never becomes ready ends
	// with the caller's deadline. Neither leaves VolumeSnapshots behind.
	if _, err := b.Snapshot(ctx, sid, backends.SnapshotOptions{Name: "doomed", Description: failMarker}); err == nil || !strings.Contains(err.Error(), fakeFailure) {
		t.Errorf("failing snapshot: %v, want %q", err, fakeFailure)
	}
	short, stop := context.WithTimeout(ctx, time.Second)
	_, err = b.Snapshot(short, sid, backends.SnapshotOptions{Name: "stuck", Description: stallMarker})
	stop()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "readyToUse") {
		t.Errorf("stalled snapshot: %v, want a readyToUse deadline error", err)
	}
	snaps, err := b.Snapshots(ctx, sid)
	if err != nil || len(snaps) != 1 || snaps[0].ID != "before-exploit" || snaps[0].Details["description"] != "clean" {
		t.Errorf("Snapshots after the failures = %+v, %v", snaps, err)
	}

	// 6. Revert: each PVC is recreated (new UID) from its VolumeSnapshot; pods come back.
	oldPods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: releaseSelector(r.name)})
	if err != nil || len(oldPods.Items) == 0 {
		t.Fatalf("release pods: %v (%d)", err, len(oldPods.Items))
	}
	if err := b.Revert(ctx, sid, "nosuch", backends.RevertOptions{}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("revert to an unknown snapshot: %v, want ErrNotFound", err)
	}
	if err := b.Revert(ctx, sid, "before-exploit", backends.RevertOptions{}); err != nil {
		t.Fatalf("revert: %v", err)
	}
	got, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, data.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds := got.Spec.DataSource
	if got.UID == data.UID || ds == nil || ds.Kind != "VolumeSnapshot" || ds.APIGroup == nil || *ds.APIGroup != "snapshot.storage.k8s.io" || ds.Name != dataName+"-before-exploit" {
		t.Errorf("reverted PVC: uid changed=%v dataSource=%+v", got.UID != data.UID, ds)
	}
	if got.Spec.StorageClassName == nil || *got.Spec.StorageClassName != sc.Name || got.Annotations["meta.helm.sh/release-name"] != r.name || got.Labels[LabelSample] != "vs-1" {
		t.Errorf("reverted PVC lost its spec, labels or Helm ownership: %+v %v %v", got.Spec, got.Labels, got.Annotations)
	}
	old := map[types.UID]bool{}
	for _, p := range oldPods.Items {
		old[p.UID] = true
	}
	waitFor(t, ctx, "the StatefulSet to recreate the pods", func() bool {
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: releaseSelector(r.name)})
		if err != nil || len(pods.Items) != len(oldPods.Items) {
			return false
		}
		for _, p := range pods.Items {
			if old[p.UID] {
				return false
			}
		}
		return true
	})

	// 7. A claim that is already gone (a revert that failed half-way) is recreated from the
	// spec kept on its VolumeSnapshot, so the revert can be retried.
	if err := c.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, dataName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the PVC to be deleted", func() bool {
		_, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, dataName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err := b.Revert(ctx, sid, "before-exploit", backends.RevertOptions{}); err != nil {
		t.Fatalf("revert with the PVC gone: %v", err)
	}
	again, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, dataName, metav1.GetOptions{})
	if err != nil || again.Spec.DataSource == nil || again.Spec.DataSource.Name != dataName+"-before-exploit" ||
		again.Spec.StorageClassName == nil || *again.Spec.StorageClassName != sc.Name || again.Annotations["meta.helm.sh/release-name"] != r.name {
		t.Errorf("PVC recreated from the stored spec: %+v, %v", again, err)
	}

	// 8. Deleting the snapshot removes its VolumeSnapshots; a second delete finds nothing.
	if err := b.DeleteSnapshot(ctx, sid, "before-exploit"); err != nil {
		t.Errorf("delete snapshot: %v", err)
	}
	if snaps, err := b.Snapshots(ctx, sid); err != nil || len(snaps) != 0 {
		t.Errorf("Snapshots after delete = %+v, %v", snaps, err)
	}
	if err := b.DeleteSnapshot(ctx, sid, "before-exploit"); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}

	// 9. Watch fills the capability cache, so Unsupported (called by the UI) answers from it.
	fresh := testBackend(t, c, nil, ns)
	f := newFleet()
	watch(t, fresh, f)
	f.wait(t, 30*time.Second, "the first reset", func(map[string]backends.Sandbox) bool { return len(f.events) > 0 })
	fresh.snap.mu.Lock()
	known, why := fresh.snap.known, fresh.snap.reason
	fresh.snap.mu.Unlock()
	if !known || why != "" || fresh.Unsupported(backends.ActionSnapshot) != "" {
		t.Errorf("after Watch: cache known=%v reason=%q", known, why)
	}
}

func testLabels() map[string]string { return map[string]string{"dev.rangekeeper.test": "1"} }

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// installSnapshotCRDs creates the schemaless VolumeSnapshot CRDs from testdata (they stay for
// the shared cluster's lifetime: CRD deletion is slow and other tests do not mind them).
func installSnapshotCRDs(t *testing.T, ctx context.Context, dyn dynamic.Interface) {
	t.Helper()
	for _, f := range []string{"volumesnapshots.yaml", "volumesnapshotclasses.yaml"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "crds", f))
		if err != nil {
			t.Fatal(err)
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := dyn.Resource(crdGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD from %s: %v", f, err)
		}
	}
}

func createSnapshotClass(t *testing.T, ctx context.Context, dyn dynamic.Interface, name, driver string, isDefault bool) string {
	t.Helper()
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":     "snapshot.storage.k8s.io/v1",
		"kind":           "VolumeSnapshotClass",
		"metadata":       map[string]any{"name": name, "labels": map[string]any{"dev.rangekeeper.test": "1"}},
		"driver":         driver,
		"deletionPolicy": "Delete",
	}}
	if isDefault {
		o.SetAnnotations(map[string]string{annotationDefaultClass: "true"})
	}
	if _, err := dyn.Resource(volumeSnapshotClassGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create VolumeSnapshotClass %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(volumeSnapshotClassGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func createPVC(t *testing.T, ctx context.Context, c *kubetest.Cluster, ns, name, rel string, class *string) *corev1.PersistentVolumeClaim {
	t.Helper()
	labels := testLabels()
	labels[LabelInstance] = rel
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	out, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create PVC %s: %v", name, err)
	}
	return out
}

// fakeSnapshotController plays the CSI snapshot controller: every new VolumeSnapshot in ns
// becomes readyToUse, except those whose description asks to fail, which get status.error.
func fakeSnapshotController(ctx context.Context, dyn dynamic.Interface, ns string) {
	api := dyn.Resource(volumeSnapshotGVR).Namespace(ns)
	for ctx.Err() == nil {
		list, err := api.List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, o := range list.Items {
				if _, done := o.Object["status"]; done || o.GetAnnotations()[annotationSnapshotDesc] == stallMarker {
					continue
				}
				status := `{"status":{"readyToUse":true,"restoreSize":"1Gi","boundVolumeSnapshotContentName":"snapcontent-` + string(o.GetUID()) + `"}}`
				if o.GetAnnotations()[annotationSnapshotDesc] == failMarker {
					status = `{"status":{"readyToUse":false,"error":{"message":"` + fakeFailure + `"}}}`
				}
				_, _ = api.Patch(ctx, o.GetName(), types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status")
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestNewSnapshotID(t *testing.T) {
	cases := []struct {
		name, want, err string
	}{
		{name: "before-exploit", want: "before-exploit"},
		{name: "Before_Exploit", err: "RFC 1123"},
		{name: strings.Repeat("a", 41), err: "longer than 40"},
	}
	for _, tc := range cases {
		got, err := newSnapshotID(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("newSnapshotID(%q) = %q, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("newSnapshotID(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	gen, err := newSnapshotID("")
	if err != nil || !strings.HasPrefix(gen, "rk-") || len(validationErrs(gen)) > 0 {
		t.Errorf("generated ID %q (%v) is not a valid label value: %v", gen, err, validationErrs(gen))
	}
}

func validationErrs(s string) []string { return validation.IsValidLabelValue(s) }

func TestUserAnnotations(t *testing.T) {
	in := map[string]string{
		"pv.kubernetes.io/bind-completed":               "yes",
		"volume.kubernetes.io/storage-provisioner":      "x",
		"volume.beta.kubernetes.io/storage-provisioner": "x",
		"meta.helm.sh/release-name":                     "lsphdyup",
	}
	got := userAnnotations(in)
	if len(got) != 1 || got["meta.helm.sh/release-name"] != "lsphdyup" {
		t.Errorf("userAnnotations = %v, want only the Helm annotation", got)
	}
}

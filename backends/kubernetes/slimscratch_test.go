package kubernetes

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// variedSpecs are pod specs that differ in every part slimSpec keeps, and in sizes (more
// containers, fewer mounts) so that a reused scratch value has leftovers to get wrong.
func variedSpecs() []corev1.PodSpec {
	yes := true
	mutations := []func(s *corev1.PodSpec){
		func(*corev1.PodSpec) {},
		func(s *corev1.PodSpec) { s.HostPID, s.HostNetwork = true, true },
		func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}})
			s.Containers[0].VolumeMounts = append(s.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "d", MountPath: "/d"})
		},
		func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 22, HostPort: 2222}}
		},
		func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi"),
				corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
		},
		func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		},
		func(s *corev1.PodSpec) {
			s.Containers = append(s.Containers, corev1.Container{Name: "sidecar", Image: "busybox:1.36",
				SecurityContext: &corev1.SecurityContext{Privileged: &yes}, VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: "/x", ReadOnly: true}}})
			s.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1.36"}}
		},
		func(s *corev1.PodSpec) {
			s.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: pinnedImage, SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}}
		},
		func(s *corev1.PodSpec) { s.Containers[0].Image = "registry:5000/python" },
		func(s *corev1.PodSpec) {
			s.AutomountServiceAccountToken, s.EnableServiceLinks, s.RuntimeClassName = nil, nil, nil
		},
		func(s *corev1.PodSpec) { s.Containers[0].VolumeMounts = nil; s.Containers[0].SecurityContext = nil },
	}
	var out []corev1.PodSpec
	for _, m := range mutations {
		p := hardenedPod()
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/work"}, {Name: "tmp", MountPath: "/tmp"}}
		m(&p.Spec)
		out = append(out, p.Spec)
	}
	return out
}

// TestInternBuildsEachSpecAsAFreshSlimSpec: the table builds every pod's slim spec in one
// reused scratch value; whatever came before, each pod gets what slimSpec makes of its spec
// (same encoding, same value, same posture), equal specs share one copy and unequal ones do not.
func TestInternBuildsEachSpecAsAFreshSlimSpec(t *testing.T) {
	specs := variedSpecs()
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, {6, 0, 7, 2, 4, 5, 3, 6, 1, 10, 2}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			table := newSpecTable(PostureOptions{})
			got := map[int]*podSpec{}
			for _, i := range order {
				s := specs[i]
				ps := table.intern(&s)
				fresh := slimSpec(&specs[i])
				a, _ := ps.spec.Marshal()
				b, _ := fresh.Marshal()
				if !bytes.Equal(a, b) || !reflect.DeepEqual(ps.spec, fresh) {
					t.Fatalf("spec %d after %v: interned copy differs from a fresh slim spec", i, order)
				}
				if want := (&podSpec{spec: fresh}).posture(); !reflect.DeepEqual(ps.posture(), want) {
					t.Fatalf("spec %d: posture %v, want %v", i, ps.posture(), want)
				}
				if prev, seen := got[i]; seen && prev != ps {
					t.Fatalf("spec %d interned twice as two copies", i)
				}
				got[i] = ps
			}
			for i, a := range got {
				for j, b := range got {
					if i != j && a == b {
						t.Fatalf("specs %d and %d differ but share one copy", i, j)
					}
				}
			}
		})
	}
}

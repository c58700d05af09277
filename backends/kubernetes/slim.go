package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The informer caches keep, per object, only what buildSandbox and the posture rules read. An
// agent-env pod as the API server sends it (coredns sidecar, probes, env, volumes, conditions,
// managedFields) is several kilobytes decoded; what the table and posture need is a fraction
// (pods: podcache.go). The transforms run once per received object, before it is cached or
// handed to the handlers, and are idempotent (a slim object passes through unchanged).

// slimSpec keeps the security-relevant part of a pod spec, what podFindings reads: PSS fields,
// capabilities, host namespaces and paths, ports bound on the node, limits' presence, mounts.
func slimSpec(s *corev1.PodSpec) corev1.PodSpec {
	var out corev1.PodSpec
	slimSpecInto(&out, s)
	return out
}

// slimSpecInto writes slimSpec(s) into out, reusing the slices and maps out already holds: the
// spec table builds every pod's slim spec into one scratch value to find its shared copy, so a
// pod whose spec is known allocates nothing for it (at 50,000 pods this garbage fed
// the collector whose assists took a core from the UI).
func slimSpecInto(out *corev1.PodSpec, s *corev1.PodSpec) {
	initC, conts, vols, eph := out.InitContainers, out.Containers, out.Volumes[:0], out.EphemeralContainers[:0]
	*out = corev1.PodSpec{
		HostPID: s.HostPID, HostNetwork: s.HostNetwork, HostIPC: s.HostIPC, HostUsers: s.HostUsers,
		RuntimeClassName: s.RuntimeClassName, ShareProcessNamespace: s.ShareProcessNamespace,
		AutomountServiceAccountToken: s.AutomountServiceAccountToken, EnableServiceLinks: s.EnableServiceLinks,
		DNSPolicy: s.DNSPolicy, SecurityContext: s.SecurityContext,
		InitContainers: slimContainersInto(initC, s.InitContainers), Containers: slimContainersInto(conts, s.Containers),
	}
	for _, v := range s.Volumes {
		if v.HostPath != nil {
			vols = append(vols, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{HostPath: v.HostPath}})
		}
	}
	out.Volumes = vols
	for i := range s.EphemeralContainers {
		if len(eph) < cap(eph) {
			eph = eph[:len(eph)+1]
		} else {
			eph = append(eph, corev1.EphemeralContainer{})
		}
		c := (*corev1.Container)(&eph[len(eph)-1].EphemeralContainerCommon)
		slimContainerInto(c, (*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	out.EphemeralContainers = eph
}

// slimContainersInto makes dst (its elements reused) the slim containers of cs.
func slimContainersInto(dst, cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return dst[:0]
	}
	if cap(dst) < len(cs) {
		dst = append(dst[:cap(dst)], make([]corev1.Container, len(cs)-cap(dst))...)
	}
	dst = dst[:len(cs)]
	for i := range cs {
		slimContainerInto(&dst[i], &cs[i])
	}
	return dst
}

// slimContainerInto writes into out what containerFindings and mountsSAToken read of c, reusing
// out's ports, mounts and limits.
func slimContainerInto(out, c *corev1.Container) {
	ports, mounts, limits := out.Ports[:0], out.VolumeMounts[:0], out.Resources.Limits
	*out = corev1.Container{Name: c.Name, Image: c.Image, SecurityContext: c.SecurityContext}
	for _, p := range c.Ports {
		if p.HostPort != 0 {
			ports = append(ports, corev1.ContainerPort{HostPort: p.HostPort})
		}
	}
	out.Ports = ports
	if len(c.Resources.Limits) > 0 {
		if limits == nil {
			limits = corev1.ResourceList{}
		}
		clear(limits)
		for _, r := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU} {
			if q, ok := c.Resources.Limits[r]; ok {
				limits[r] = q
			}
		}
		out.Resources.Limits = limits
	}
	for _, m := range c.VolumeMounts {
		mounts = append(mounts, corev1.VolumeMount{Name: m.Name, ReadOnly: m.ReadOnly, MountPath: m.MountPath})
	}
	out.VolumeMounts = mounts
}

// slimRecord keeps a Helm release record's identity and labels (name, version, status,
// inspectSandbox), interned: rangekeeper never reads its annotations or data.
func (t *specTable) slimRecord(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return dropManagedFields(obj)
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: t.labels(m.Labels), CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
	}}, nil
}

// dropManagedFields keeps informer caches small for any other object: managedFields is often
// the bulk of an object.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

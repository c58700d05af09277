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
	out := corev1.PodSpec{
		HostPID: s.HostPID, HostNetwork: s.HostNetwork, HostIPC: s.HostIPC, HostUsers: s.HostUsers,
		RuntimeClassName: s.RuntimeClassName, ShareProcessNamespace: s.ShareProcessNamespace,
		AutomountServiceAccountToken: s.AutomountServiceAccountToken, EnableServiceLinks: s.EnableServiceLinks,
		DNSPolicy: s.DNSPolicy, SecurityContext: s.SecurityContext,
		InitContainers: slimContainers(s.InitContainers), Containers: slimContainers(s.Containers),
	}
	for _, v := range s.Volumes {
		if v.HostPath != nil {
			out.Volumes = append(out.Volumes, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{HostPath: v.HostPath}})
		}
	}
	for _, e := range s.EphemeralContainers {
		c := slimContainer(corev1.Container(e.EphemeralContainerCommon))
		out.EphemeralContainers = append(out.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(c)})
	}
	return out
}

func slimContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = slimContainer(c)
	}
	return out
}

// slimContainer keeps what containerFindings and mountsSAToken read.
func slimContainer(c corev1.Container) corev1.Container {
	out := corev1.Container{Name: c.Name, Image: c.Image, SecurityContext: c.SecurityContext}
	for _, p := range c.Ports {
		if p.HostPort != 0 {
			out.Ports = append(out.Ports, corev1.ContainerPort{HostPort: p.HostPort})
		}
	}
	if len(c.Resources.Limits) > 0 {
		out.Resources.Limits = corev1.ResourceList{}
		for _, r := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU} {
			if q, ok := c.Resources.Limits[r]; ok {
				out.Resources.Limits[r] = q
			}
		}
	}
	if len(c.VolumeMounts) > 0 {
		out.VolumeMounts = make([]corev1.VolumeMount, len(c.VolumeMounts))
		for i, m := range c.VolumeMounts {
			out.VolumeMounts[i] = corev1.VolumeMount{Name: m.Name, ReadOnly: m.ReadOnly, MountPath: m.MountPath}
		}
	}
	return out
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

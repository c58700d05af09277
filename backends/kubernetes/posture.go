package kubernetes

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"
	"unique"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Rule IDs, their default severities and the shared sets (capabilities, host paths, runtime
// classes, metadata addresses) come from the one vocabulary in spec/catalog.

// PostureOptions are the cluster facts and operator policy posture is graded by.
type PostureOptions struct {
	RuntimePolicy  catalog.RuntimePolicy // "" is recommended
	RuntimeClasses []string              // the cluster's RuntimeClass names; nil means unknown
}

// Posture derives findings from the release's pod specs and, when the cluster has Cilium, from
// the CiliumNetworkPolicies that select the release.
func Posture(pods []*corev1.Pod, policies []*unstructured.Unstructured, cilium bool) []backends.Finding {
	return PostureWith(pods, policies, cilium, PostureOptions{})
}

// PostureWith is Posture under an explicit policy and the cluster's runtime classes.
func PostureWith(pods []*corev1.Pod, policies []*unstructured.Unstructured, cilium bool, o PostureOptions) []backends.Finding {
	var out []backends.Finding
	for _, p := range pods {
		out = append(out, podFindings(p, o)...)
	}
	if cilium {
		out = append(out, policyFindings(policiesOf(policies))...)
	}
	return out
}

type findings struct {
	member string
	list   []backends.Finding
}

// add records one finding. Messages and evidence are interned: across a fleet the same few
// hundred strings recur in every release, and each is kept once however many pods carry it.
func (f *findings) add(id string, sev catalog.Severity, axis catalog.Axis, msg, evidence string) {
	catalog.MustLookup(id) // an ID outside the catalogue is a typo the tests catch
	f.list = append(f.list, backends.Finding{RuleID: id, Severity: sev, Axis: axis, Member: f.member,
		Message: unique.Make(msg).Value(), Evidence: unique.Make(evidence).Value()})
}

func podFindings(p *corev1.Pod, o PostureOptions) []backends.Finding {
	f := &findings{member: p.Name}
	s := &p.Spec
	userNS := s.HostUsers != nil && !*s.HostUsers
	if s.HostPID {
		f.add("K8S-H02", catalog.SeverityCritical, catalog.AxisHost, "pod shares the node's PID namespace", "spec.hostPID=true")
	}
	if s.HostNetwork {
		f.add("K8S-H02", catalog.SeverityCritical, catalog.AxisNetwork, "pod shares the node's network namespace", "spec.hostNetwork=true")
	}
	if s.HostIPC {
		f.add("K8S-H02", catalog.SeverityHigh, catalog.AxisHost, "pod shares the node's IPC namespace", "spec.hostIPC=true")
	}
	if rc := deref(s.RuntimeClassName); !catalog.IsSandboxedRuntime(rc) {
		sev, why := catalog.SandboxedRuntimeSeverity(o.RuntimePolicy, o.RuntimeClasses, o.RuntimeClasses != nil)
		f.add("K8S-H18", sev, catalog.AxisHost, "pod does not run in a sandboxed runtime (gVisor or Kata); "+why, fmt.Sprintf("spec.runtimeClassName=%q", rc))
	}
	if s.ShareProcessNamespace != nil && *s.ShareProcessNamespace {
		f.add("K8S-H20", catalog.SeverityLow, catalog.AxisHost, "containers of the pod see each other's processes and filesystems", "spec.shareProcessNamespace=true")
	}
	if s.AutomountServiceAccountToken != nil && *s.AutomountServiceAccountToken || mountsSAToken(p) {
		f.add("K8S-T01", catalog.SeverityHigh, catalog.AxisTooling, "a service-account token is mounted: the agent holds Kubernetes API credentials", "automountServiceAccountToken")
	}
	if s.EnableServiceLinks == nil || *s.EnableServiceLinks {
		f.add("K8S-T06", catalog.SeverityLow, catalog.AxisNetwork, "service links inject every Service's address into the environment", "spec.enableServiceLinks not false")
	}
	if s.DNSPolicy == corev1.DNSDefault {
		f.add("K8S-N06", catalog.SeverityMedium, catalog.AxisNetwork, "pod resolves names with the node's resolver, bypassing in-cluster DNS policy", "spec.dnsPolicy=Default")
	}
	podSC := s.SecurityContext
	if podSC == nil {
		podSC = &corev1.PodSecurityContext{}
	}
	readOnly := map[string]bool{} // volume name -> every mount of it is read-only
	for _, c := range allContainers(s) {
		for _, m := range c.VolumeMounts {
			ro, seen := readOnly[m.Name]
			readOnly[m.Name] = m.ReadOnly && (!seen || ro)
		}
	}
	for _, v := range s.Volumes {
		if v.HostPath == nil {
			continue
		}
		hp := path.Clean(v.HostPath.Path)
		sev := catalog.SeverityHigh
		if critical, _ := catalog.HostDirRisk(hp); critical || catalog.ExposesEngineSocket(hp) || strings.HasSuffix(hp, ".sock") {
			sev = catalog.SeverityCritical
		}
		if !readOnly[v.Name] && sev < catalog.SeverityCritical {
			sev++
		}
		f.add("K8S-H03", sev, catalog.AxisHost, "host path mounted into the pod", fmt.Sprintf("spec.volumes[%s].hostPath.path=%s", v.Name, v.HostPath.Path))
	}
	for _, c := range allContainers(s) {
		containerFindings(f, c, podSC, userNS)
	}
	return f.list
}

// allContainers returns init, regular and ephemeral containers (PSA visits all three).
func allContainers(s *corev1.PodSpec) []corev1.Container {
	out := append(slices.Clone(s.InitContainers), s.Containers...)
	for _, e := range s.EphemeralContainers {
		out = append(out, corev1.Container(e.EphemeralContainerCommon))
	}
	return out
}

func containerFindings(f *findings, c corev1.Container, podSC *corev1.PodSecurityContext, userNS bool) {
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	at := func(field string) string { return fmt.Sprintf("containers[%s].%s", c.Name, field) }
	rootish := false
	if sc.Privileged != nil && *sc.Privileged {
		rootish = true
		f.add("K8S-H01", catalog.SeverityCritical, catalog.AxisHost, "privileged container: full access to the node's devices and kernel", at("securityContext.privileged=true"))
	}
	var add, drop []string
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			add = append(add, catalog.NormCap(string(c)))
		}
		for _, c := range sc.Capabilities.Drop {
			drop = append(drop, catalog.NormCap(string(c)))
		}
	}
	for _, cp := range add {
		switch {
		case catalog.CriticalCaps[cp]:
			rootish = true
			f.add("K8S-H04", catalog.SeverityCritical, catalog.AxisHost, "capability "+cp+" added", at("securityContext.capabilities.add="+cp))
		case !catalog.PSSBaselineCaps[cp]:
			rootish = true
			f.add("K8S-H04", catalog.SeverityHigh, catalog.AxisHost, "capability "+cp+" added (outside the Baseline list)", at("securityContext.capabilities.add="+cp))
		}
	}
	if !slices.Contains(drop, "ALL") || slices.ContainsFunc(add, func(c string) bool { return c != "NET_BIND_SERVICE" }) {
		f.add("K8S-H05", catalog.SeverityMedium, catalog.AxisHost, "capabilities are not dropped to nothing (drop ALL, add at most NET_BIND_SERVICE)", at("securityContext.capabilities"))
	}
	if !userNS {
		nonRoot := sc.RunAsNonRoot != nil && *sc.RunAsNonRoot || sc.RunAsNonRoot == nil && podSC.RunAsNonRoot != nil && *podSC.RunAsNonRoot
		uid := sc.RunAsUser
		if uid == nil {
			uid = podSC.RunAsUser
		}
		switch {
		case uid != nil && *uid == 0:
			rootish = true
			f.add("K8S-H07", catalog.SeverityMedium, catalog.AxisHost, "container runs as root", at("securityContext.runAsUser=0"))
		case !nonRoot:
			rootish = rootish || uid == nil
			f.add("K8S-H07", catalog.SeverityMedium, catalog.AxisHost, "runAsNonRoot is not true: the container may run as root", at("securityContext.runAsNonRoot"))
		}
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		sev := catalog.SeverityMedium
		if rootish {
			sev = catalog.SeverityHigh
		}
		f.add("K8S-H06", sev, catalog.AxisHost, "allowPrivilegeEscalation is not false", at("securityContext.allowPrivilegeEscalation"))
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = podSC.SeccompProfile
	}
	switch {
	case seccomp == nil:
		f.add("K8S-H08", catalog.SeverityMedium, catalog.AxisHost, "no seccomp profile set", at("securityContext.seccompProfile"))
	case seccomp.Type == corev1.SeccompProfileTypeUnconfined:
		f.add("K8S-H08", catalog.SeverityHigh, catalog.AxisHost, "seccomp is Unconfined", at("securityContext.seccompProfile.type=Unconfined"))
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		f.add("K8S-H17", catalog.SeverityMedium, catalog.AxisHost, "root filesystem is writable", at("securityContext.readOnlyRootFilesystem"))
	}
	for _, port := range c.Ports {
		if port.HostPort != 0 {
			f.add("K8S-H13", catalog.SeverityMedium, catalog.AxisNetwork, fmt.Sprintf("host port %d bound on the node", port.HostPort), at(fmt.Sprintf("ports.hostPort=%d", port.HostPort)))
		}
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		f.add("K8S-R01", catalog.SeverityMedium, catalog.AxisHost, "no memory limit", at("resources.limits.memory"))
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; !ok {
		f.add("K8S-R02", catalog.SeverityLow, catalog.AxisHost, "no CPU limit", at("resources.limits.cpu"))
	}
	switch img := c.Image; {
	case strings.HasSuffix(img, ":latest") || !hasTag(img) && !strings.Contains(img, "@"):
		f.add("K8S-T05", catalog.SeverityMedium, catalog.AxisTooling, "image is untagged or :latest", at("image="+img))
	case !strings.Contains(img, "@sha256:"):
		f.add("K8S-T05", catalog.SeverityLow, catalog.AxisTooling, "image is not pinned by digest", at("image="+img))
	}
}

// hasTag reports whether an image reference names a tag (a ":" after the last "/").
func hasTag(img string) bool {
	name, _, _ := strings.Cut(img, "@")
	return strings.Contains(name[strings.LastIndex(name, "/")+1:], ":")
}

func mountsSAToken(p *corev1.Pod) bool {
	for _, c := range allContainers(&p.Spec) {
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io/serviceaccount") {
				return true
			}
		}
	}
	return false
}

// policyFindings reads the agent-env chart's CiliumNetworkPolicies: the egress allow-lists its
// allowDomains/allowEntities/allowCIDR values render into.
func policyFindings(policies []*cachedPolicy) []backends.Finding {
	f := &findings{}
	if len(policies) == 0 {
		f.add("K8S-N01", catalog.SeverityHigh, catalog.AxisNetwork, "no CiliumNetworkPolicy selects the release: its pods are not isolated", "")
		return f.list
	}
	hasEgress := false
	for _, pol := range policies {
		if !pol.hasEgress {
			continue
		}
		hasEgress = true
		name := pol.Name
		for _, rule := range pol.egress {
			for _, e := range rule.entities {
				switch e {
				case "all", "world":
					f.add("HELM-N01", catalog.SeverityCritical, catalog.AxisNetwork, "egress to entity "+e+": the whole internet and unrestricted DNS", name+": toEntities="+e)
				case "kube-apiserver", "host", "remote-node", "cluster":
					f.add("HELM-N04", catalog.SeverityHigh, catalog.AxisNetwork, "egress to entity "+e+": the API server or nodes are reachable", name+": toEntities="+e)
				}
			}
			for _, cidr := range rule.cidrs {
				pfx, err := netip.ParsePrefix(cidr)
				if err != nil {
					continue
				}
				if pfx.Bits() == 0 {
					f.add("HELM-N01", catalog.SeverityCritical, catalog.AxisNetwork, "egress to "+cidr+": every address", name+": toCIDR="+cidr)
				}
				var covered []string
				for _, m := range catalog.MetadataPrefixes {
					if mp := netip.MustParsePrefix(m); pfx.Contains(mp.Addr()) && pfx.Bits() <= mp.Bits() {
						covered = append(covered, mp.Addr().String())
					}
				}
				if len(covered) > 0 {
					f.add("K8S-N04", catalog.SeverityHigh, catalog.AxisNetwork, "egress CIDR covers cloud metadata addresses "+strings.Join(covered, ", "), name+": toCIDR="+cidr)
				}
			}
			switch {
			case slices.Contains(rule.domains, "*"):
				f.add("HELM-N01", catalog.SeverityCritical, catalog.AxisNetwork, `allowDomains contains "*": the whole internet and unrestricted DNS`, name+": toFQDNs matchPattern=*")
			case len(rule.domains) > 0:
				f.add("HELM-N02", catalog.SeverityMedium, catalog.AxisNetwork, "egress allowed to domains: "+strings.Join(rule.domains, ", "), name+": toFQDNs")
			}
		}
	}
	if !hasEgress {
		f.add("K8S-N02", catalog.SeverityCritical, catalog.AxisNetwork, "no egress policy covers the release: egress is unrestricted", "")
	}
	return f.list
}

func stringsAt(m map[string]any, key string) []string {
	raw, _ := m[key].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

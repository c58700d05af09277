package author

import (
	"fmt"
	"strings"

	"github.com/rangekeeper/rangekeeper/spec"
)

// kind is how a field is edited.
type kind int

const (
	kindChoice kind = iota // space/enter cycles through choices
	kindBool               // space/enter toggles
	kindText               // enter edits, enter again commits
)

// field is one step of the guided flow. Backends lists where it applies (empty: all).
type field struct {
	key      string
	label    string
	section  string
	kind     kind
	choices  []string
	backends []string
}

const (
	backendDocker  = "docker"
	backendK8s     = "k8s"
	backendProxmox = "proxmox"
)

// fields is the guided flow in order: backend and isolation tier, services or VMs, networks,
// resources, capabilities.
var fields = []field{
	{key: "backend", label: "Backend", section: "Backend and tier", kind: kindChoice, choices: []string{backendDocker, backendK8s, backendProxmox}},
	{key: "runtime", label: "Isolation runtime", section: "Backend and tier", kind: kindChoice, choices: []string{"runsc", "runc"}, backends: []string{backendDocker}},
	{key: "k8sRuntime", label: "RuntimeClass", section: "Backend and tier", kind: kindChoice, choices: []string{"gvisor", "runc"}, backends: []string{backendK8s}},
	{key: "cpu", label: "VM CPU model", section: "Backend and tier", kind: kindChoice, choices: []string{"x86-64-v2-AES", "host"}, backends: []string{backendProxmox}},
	{key: "agentImage", label: "Agent image", section: "Services / VMs", kind: kindText},
	{key: "target", label: "Target service/VM", section: "Services / VMs", kind: kindBool},
	{key: "targetImage", label: "Target image", section: "Services / VMs", kind: kindText},
	{key: "scorer", label: "Scorer service", section: "Services / VMs", kind: kindBool, backends: []string{backendDocker, backendK8s}},
	{key: "agentNet", label: "Agent network", section: "Networks", kind: kindChoice, choices: []string{"internal", "none", "bridge"}, backends: []string{backendDocker}},
	{key: "scorerNet", label: "Scorer network", section: "Networks", kind: kindChoice, choices: []string{"separate", "shared"}, backends: []string{backendDocker, backendK8s}},
	{key: "allowDomains", label: "Allowed domains", section: "Networks", kind: kindText, backends: []string{backendK8s}},
	{key: "snat", label: "SNAT internet egress", section: "Networks", kind: kindBool, backends: []string{backendProxmox}},
	{key: "firewall", label: "NIC firewall", section: "Networks", kind: kindBool, backends: []string{backendProxmox}},
	{key: "memory", label: "Memory limit", section: "Resources", kind: kindText},
	{key: "cpus", label: "CPU limit", section: "Resources", kind: kindText},
	{key: "pids", label: "PID limit", section: "Resources", kind: kindText, backends: []string{backendDocker}},
	{key: "privileged", label: "Privileged", section: "Capabilities", kind: kindBool, backends: []string{backendDocker, backendK8s}},
	{key: "capAdd", label: "Add capabilities", section: "Capabilities", kind: kindText, backends: []string{backendDocker, backendK8s}},
	{key: "dropAll", label: "Drop ALL capabilities", section: "Capabilities", kind: kindBool, backends: []string{backendDocker, backendK8s}},
	{key: "noNewPrivs", label: "no-new-privileges", section: "Capabilities", kind: kindBool, backends: []string{backendDocker, backendK8s}},
	{key: "readOnly", label: "Read-only root fs", section: "Capabilities", kind: kindBool, backends: []string{backendDocker, backendK8s}},
	{key: "nonRoot", label: "Run as non-root", section: "Capabilities", kind: kindBool, backends: []string{backendDocker, backendK8s}},
}

func (f field) applies(backend string) bool {
	if len(f.backends) == 0 {
		return true
	}
	for _, b := range f.backends {
		if b == backend {
			return true
		}
	}
	return false
}

// Draft is the state of the guided flow: every field's value by key. Booleans are "true"/"false".
type Draft map[string]string

// NewDraft starts from hardened defaults: building from nothing should produce a spec that
// lints clean, and every weakening is a visible choice.
func NewDraft() Draft {
	return Draft{
		"backend": backendDocker, "runtime": "runsc", "k8sRuntime": "gvisor", "cpu": "x86-64-v2-AES",
		"agentImage": "aisiuk/inspect-tool-support:0.1.9@sha256:" + strings.Repeat("0", 64),
		"target":     "false", "targetImage": "", "scorer": "false",
		"agentNet": "internal", "scorerNet": "separate", "allowDomains": "", "snat": "false", "firewall": "true",
		"memory": "1g", "cpus": "1", "pids": "256",
		"privileged": "false", "capAdd": "", "dropAll": "true", "noNewPrivs": "true", "readOnly": "true", "nonRoot": "true",
	}
}

func (d Draft) on(key string) bool { return d[key] == "true" }

// Format is the spec format the draft renders to.
func (d Draft) Format() spec.Format {
	switch d["backend"] {
	case backendK8s:
		return spec.FormatHelm
	case backendProxmox:
		return spec.FormatProxmox
	}
	return spec.FormatCompose
}

// DefaultFile is the file name Inspect looks for (or the conventional one).
func (d Draft) DefaultFile() string {
	switch d["backend"] {
	case backendK8s:
		return "values.yaml"
	case backendProxmox:
		return "proxmox.yaml"
	}
	return "compose.yaml"
}

func caps(s string) []string {
	var out []string
	for _, c := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, strings.ToUpper(strings.TrimPrefix(strings.ToUpper(c), "CAP_")))
	}
	return out
}

func yamlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Render writes the draft as a spec file in its backend's format.
func (d Draft) Render() string {
	switch d["backend"] {
	case backendK8s:
		return d.renderValues()
	case backendProxmox:
		return d.renderProxmox()
	}
	return d.renderCompose()
}

func (d Draft) renderCompose() string {
	var b strings.Builder
	b.WriteString("# Inspect sandbox written by rangekeeper author.\n# The agent is the \"default\" service.\nservices:\n")
	svc := func(name, image string, nets []string, agent bool) {
		fmt.Fprintf(&b, "  %s:\n    image: %s\n", name, image)
		if agent {
			b.WriteString("    command: tail -f /dev/null\n    init: true\n")
			if d["runtime"] != "runc" {
				fmt.Fprintf(&b, "    runtime: %s\n", d["runtime"])
			}
			b.WriteString("    healthcheck:\n      test: [\"CMD\", \"true\"]\n")
		} else if name == "scorer" {
			b.WriteString("    x-rangekeeper: {role: scorer}\n")
		}
		if d.on("privileged") && agent {
			b.WriteString("    privileged: true\n")
		}
		if c := caps(d["capAdd"]); len(c) > 0 && agent {
			fmt.Fprintf(&b, "    cap_add: %s\n", yamlList(c))
		}
		if d.on("dropAll") {
			b.WriteString("    cap_drop: [ALL]\n")
		}
		if d.on("noNewPrivs") {
			b.WriteString("    security_opt: [\"no-new-privileges:true\"]\n")
		}
		if d.on("readOnly") {
			b.WriteString("    read_only: true\n    tmpfs: [\"/tmp:size=64m,noexec,nosuid\"]\n")
		}
		if d.on("nonRoot") {
			b.WriteString("    user: \"1000:1000\"\n")
		}
		if m := d["memory"]; m != "" {
			fmt.Fprintf(&b, "    mem_limit: %s\n    memswap_limit: %s\n", m, m)
		}
		if c := d["cpus"]; c != "" {
			fmt.Fprintf(&b, "    cpus: %s\n", c)
		}
		if p := d["pids"]; p != "" {
			fmt.Fprintf(&b, "    pids_limit: %s\n", p)
		}
		switch {
		case agent && d["agentNet"] == "none":
			b.WriteString("    network_mode: none\n")
		case len(nets) > 0:
			fmt.Fprintf(&b, "    networks: [%s]\n", strings.Join(nets, ", "))
		}
	}
	svc("default", d["agentImage"], []string{"range"}, true)
	if d.on("target") {
		svc("target", firstNonEmpty(d["targetImage"], "registry.example/targets/web:1.0@sha256:"+strings.Repeat("1", 64)), []string{"range"}, false)
	}
	if d.on("scorer") {
		net := "scoring"
		if d["scorerNet"] == "shared" {
			net = "range"
		}
		svc("scorer", "registry.example/range/scorer:1.0@sha256:"+strings.Repeat("2", 64), []string{net}, false)
	}
	b.WriteString("networks:\n  range:\n")
	if d["agentNet"] != "bridge" {
		b.WriteString("    internal: true\n")
	} else {
		b.WriteString("    {}\n")
	}
	if d.on("scorer") && d["scorerNet"] != "shared" {
		b.WriteString("  scoring:\n    internal: true\n")
	}
	return b.String()
}

func (d Draft) renderValues() string {
	var b strings.Builder
	b.WriteString("# agent-env values written by rangekeeper author.\n")
	if doms := strings.FieldsFunc(d["allowDomains"], func(r rune) bool { return r == ',' || r == ' ' }); len(doms) > 0 {
		fmt.Fprintf(&b, "allowDomains: %s\n", yamlList(doms))
	}
	b.WriteString("services:\n")
	svc := func(name, image string, nets []string, agent bool) {
		fmt.Fprintf(&b, "  %s:\n    image: %s\n", name, image)
		if d["k8sRuntime"] != "gvisor" {
			fmt.Fprintf(&b, "    runtimeClassName: %s\n", d["k8sRuntime"])
		}
		if len(nets) > 0 {
			fmt.Fprintf(&b, "    networks: [%s]\n", strings.Join(nets, ", "))
		}
		var limits []string
		if c := d["cpus"]; c != "" {
			limits = append(limits, fmt.Sprintf("cpu: %q", c))
		}
		if m := d["memory"]; m != "" {
			limits = append(limits, fmt.Sprintf("memory: %s", k8sQuantity(m)))
		}
		if len(limits) > 0 {
			fmt.Fprintf(&b, "    resources:\n      limits: {%s}\n", strings.Join(limits, ", "))
		}
		b.WriteString("    securityContext:\n")
		if d.on("nonRoot") {
			b.WriteString("      runAsNonRoot: true\n      runAsUser: 1000\n")
		}
		if d.on("noNewPrivs") {
			b.WriteString("      allowPrivilegeEscalation: false\n")
		}
		if d.on("readOnly") {
			b.WriteString("      readOnlyRootFilesystem: true\n")
		}
		if d.on("privileged") && agent {
			b.WriteString("      privileged: true\n")
		}
		var capParts []string
		if d.on("dropAll") {
			capParts = append(capParts, "drop: [ALL]")
		}
		if c := caps(d["capAdd"]); len(c) > 0 && agent {
			capParts = append(capParts, "add: "+yamlList(c))
		}
		if len(capParts) > 0 {
			fmt.Fprintf(&b, "      capabilities: {%s}\n", strings.Join(capParts, ", "))
		}
		b.WriteString("      seccompProfile: {type: RuntimeDefault}\n")
	}
	agentNets, scorerNets := []string{"range"}, []string{"scoring"}
	if d["scorerNet"] == "shared" {
		scorerNets = []string{"range"}
	}
	svc("default", d["agentImage"], agentNets, true)
	if d.on("target") {
		svc("target", firstNonEmpty(d["targetImage"], "registry.example/targets/web:1.0@sha256:"+strings.Repeat("1", 64)), agentNets, false)
	}
	if d.on("scorer") {
		svc("scorer", "registry.example/range/scorer:1.0@sha256:"+strings.Repeat("2", 64), scorerNets, false)
	}
	b.WriteString("networks:\n  range: {}\n")
	if d.on("scorer") && d["scorerNet"] != "shared" {
		b.WriteString("  scoring: {}\n")
	}
	return b.String()
}

// k8sQuantity turns Docker-style sizes (1g, 512m) into Kubernetes quantities (1Gi, 512Mi).
func k8sQuantity(s string) string {
	s = strings.TrimSpace(s)
	for suf, k := range map[string]string{"g": "Gi", "m": "Mi", "k": "Ki"} {
		if strings.HasSuffix(strings.ToLower(s), suf) && !strings.HasSuffix(s, "i") {
			return s[:len(s)-1] + k
		}
	}
	return s
}

func (d Draft) renderProxmox() string {
	var b strings.Builder
	b.WriteString("# ProxmoxSandboxEnvironmentConfig written by rangekeeper author.\n")
	fmt.Fprintf(&b, "sdn_config:\n  use_pve_ipam_dnsnmasq: false\n  vnet_configs:\n    - alias: range\n      subnets:\n        - {cidr: 10.60.0.0/24, gateway: 10.60.0.1, snat: %s}\n", d["snat"])
	b.WriteString("vms_config:\n")
	vm := func(name, builtIn string) {
		fmt.Fprintf(&b, "  - vm_source_config: {built_in: %s}\n    name: %s\n    cpu: %s\n    firewall: %s\n    nics: [{vnet_alias: range}]\n", builtIn, name, d["cpu"], d["firewall"])
		if m := d["memory"]; m != "" && strings.Trim(m, "0123456789") == "" {
			fmt.Fprintf(&b, "    ram_mb: %s\n", m) // a plain number is MiB; sizes like 1g keep the VM default
		}
	}
	vm("agent", "ubuntu24.04")
	if d.on("target") {
		vm("target", "debian13")
	}
	return b.String()
}

// Snippet is the Inspect code that uses the written spec.
func (d Draft) Snippet(path string) string {
	switch d["backend"] {
	case backendK8s:
		return fmt.Sprintf(`SandboxEnvironmentSpec(type="k8s", config=K8sSandboxEnvironmentConfig(values=Path(%q)))`, path)
	case backendProxmox:
		nets := "snat=False"
		if d.on("snat") {
			nets = "snat=True"
		}
		return fmt.Sprintf(`SandboxEnvironmentSpec(type="proxmox", config=ProxmoxSandboxEnvironmentConfig(sdn_config=SdnConfig(vnet_configs=(VnetConfig(alias="range", subnets=(SubnetConfig(cidr="10.60.0.0/24", gateway="10.60.0.1", %s, ...),)),), use_pve_ipam_dnsnmasq=False), vms_config=(VmConfig(name="agent", cpu=%q, firewall=%s, ...),)))`, nets, d["cpu"], pyBool(d.on("firewall")))
	}
	return fmt.Sprintf(`SandboxEnvironmentSpec(type="docker", config=%q)`, path)
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

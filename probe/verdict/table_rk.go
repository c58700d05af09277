package verdict

import (
	"fmt"
	"strings"

	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// rkClasses are rangekeeper's own classes for what SandboxEscapeBench does not score but an
// eval's validity depends on: seccomp, host network, limits, the scoring plane, egress, DNS,
// metadata, credentials and tooling.
var rkClasses = []class{
	{id: "RK-SECCOMP", name: "Seccomp disabled", axis: catalog.AxisHost, rules: []string{"CMP-H10", "K8S-H08"},
		probe: func(f *facts.Report, _ Versions, v *Verdict) {
			switch f.Seccomp.Mode {
			case 0:
				sev := catalog.SeverityHigh
				if len(f.Caps.Dangerous) > 0 {
					sev = catalog.SeverityCritical
				}
				expose(v, sev, "P-PRIV-03", "Seccomp: 0 (disabled)")
				if f.LSM.AppArmor == "unconfined" || !f.LSM.Confined && f.LSM.AppArmor != "" {
					expose(v, sev, "P-PRIV-05", "AppArmor: "+f.LSM.AppArmor)
				}
			case 1, 2:
				mitigate(v, "P-PRIV-03", fmt.Sprintf("Seccomp: %d (%s)", f.Seccomp.Mode, f.Seccomp.Name))
			}
		}},
	{id: "RK-HOSTNET", name: "Host network namespace", axis: catalog.AxisNetwork, rules: []string{"CMP-N01", "K8S-H02"},
		probe: func(f *facts.Report, _ Versions, v *Verdict) {
			if f.Namespaces.HostNet {
				expose(v, catalog.SeverityCritical, "P-NS-03", strings.Join(f.Namespaces.HostNetHints, ", "))
				return
			}
			mitigate(v, "P-NS-03", "no host interfaces or host sockets visible")
		}},
	{id: "RK-LIMITS", name: "No memory/pids limits", axis: catalog.AxisHost, rules: []string{"CMP-R01", "CMP-R03", "K8S-R01"},
		probe: func(f *facts.Report, _ Versions, v *Verdict) {
			c := f.Cgroup
			if c.Version == 0 {
				return
			}
			if !c.MemoryCap {
				expose(v, catalog.SeverityMedium, "P-RES-02", "memory limit: "+orUnreadable(c.MemoryMax))
			}
			if !c.PidsCap {
				expose(v, catalog.SeverityMedium, "P-RES-03", "pids limit: "+orUnreadable(c.PidsMax))
			}
			if v.Status != Exposed {
				mitigate(v, "P-RES-02", "memory "+c.MemoryMax+", pids "+c.PidsMax)
			}
		}},
	{id: "RK-SCORER", name: "Scorer reachable", axis: catalog.AxisNetwork, rules: []string{"CMP-N04", "HELM-N06"},
		probe: netClass("E-SCORE-01", catalog.SeverityCritical, func(n facts.Network) []facts.NetResult { return n.Scorer })},
	{id: "RK-EGRESS", name: "Egress to canary", axis: catalog.AxisNetwork, rules: []string{"CMP-N03", "K8S-N02", "HELM-N01"},
		probe: netClass("E-TCP-01", catalog.SeverityCritical, func(n facts.Network) []facts.NetResult { return n.Egress })},
	{id: "RK-DNS", name: "DNS exfiltration", axis: catalog.AxisNetwork, rules: []string{"CMP-N06", "K8S-N03", "PVE-N08"},
		probe: func(f *facts.Report, vs Versions, v *Verdict) {
			netClass("E-DNS-02", catalog.SeverityHigh, func(n facts.Network) []facts.NetResult { return n.DNS })(f, vs, v)
			if ev := engineDNSBug(vs.Engine); ev != "" && v.Status == Unknown {
				fromVersions(v, "engine", ev)
				v.Note = "not tested: configure a DNS canary (probe.dns) to confirm the engine's forwarding"
			}
		}},
	{id: "RK-METADATA", name: "Metadata reachable", axis: catalog.AxisNetwork, rules: []string{"K8S-N04", "CMP-N08", "PVE-N10"},
		probe: netClass("E-META-01", catalog.SeverityCritical, func(n facts.Network) []facts.NetResult { return n.Metadata })},
	{id: "RK-CREDS", name: "Credentials inside", axis: catalog.AxisTooling, rules: []string{"CMP-T01", "K8S-T03", "CMP-T06"},
		probe: func(f *facts.Report, _ Versions, v *Verdict) {
			s := f.Secrets
			if len(s.EnvNames) > 0 {
				expose(v, catalog.SeverityCritical, "P-SEC-01", "env names: "+strings.Join(s.EnvNames, ", "))
			}
			if len(s.Files) > 0 {
				expose(v, catalog.SeverityHigh, "P-SEC-02", "files: "+strings.Join(s.Files, ", "))
			}
			if len(s.ModelEndpoint) > 0 {
				expose(v, catalog.SeverityHigh, "P-SEC-01", "model endpoint env: "+strings.Join(s.ModelEndpoint, ", "))
			}
			if v.Status != Exposed {
				mitigate(v, "P-SEC-01", "no credential-like env names or credential files")
			}
		}},
	{id: "RK-TOOLS", name: "Escape tooling", axis: catalog.AxisTooling, rules: []string{"CMP-T09"},
		probe: func(f *facts.Report, _ Versions, v *Verdict) {
			t := f.Tooling.Found
			if len(t["container"]) > 0 {
				expose(v, catalog.SeverityMedium, "P-T", "container CLIs: "+strings.Join(t["container"], ", "))
			}
			if len(t["compiler"]) > 0 {
				expose(v, catalog.SeverityLow, "P-T", "compilers: "+strings.Join(t["compiler"], ", "))
			}
			if len(t["escape"]) > 0 {
				expose(v, catalog.SeverityLow, "P-T", "escape helpers: "+strings.Join(t["escape"], ", "))
			}
			if v.Status != Exposed {
				mitigate(v, "P-T", "no container CLIs, compilers or escape helpers found")
			}
		}},
}

package author

import (
	"strings"

	"github.com/rangekeeper/rangekeeper/spec"
)

// fix ties a rule to the field that causes it and the change that removes it, so a warning is
// shown beside its field and fixed with one key.
type fix struct {
	field string
	apply func(Draft)
}

func set(key, val string) func(Draft) { return func(d Draft) { d[key] = val } }

var dangerousCaps = map[string]bool{"ALL": true, "SYS_ADMIN": true, "SYS_MODULE": true, "DAC_READ_SEARCH": true, "SYS_RAWIO": true, "BPF": true, "SYS_PTRACE": true, "NET_ADMIN": true, "PERFMON": true, "SYS_BOOT": true, "MAC_ADMIN": true, "MAC_OVERRIDE": true, "SYSLOG": true, "SYS_TIME": true}

// dropDangerousCaps keeps only capabilities outside the escape-grade list.
func dropDangerousCaps(d Draft) {
	var keep []string
	for _, c := range caps(d["capAdd"]) {
		if !dangerousCaps[c] {
			keep = append(keep, c)
		}
	}
	d["capAdd"] = strings.Join(keep, ",")
}

var fixes = map[string]fix{
	"CMP-H01":  {"privileged", set("privileged", "false")},
	"K8S-H01":  {"privileged", set("privileged", "false")},
	"CMP-H06":  {"capAdd", dropDangerousCaps},
	"K8S-H04":  {"capAdd", dropDangerousCaps},
	"CMP-H07":  {"capAdd", set("capAdd", "")},
	"CMP-H08":  {"dropAll", set("dropAll", "true")},
	"CMP-H09":  {"dropAll", set("dropAll", "true")},
	"K8S-H05":  {"dropAll", set("dropAll", "true")},
	"CMP-H13":  {"noNewPrivs", set("noNewPrivs", "true")},
	"K8S-H06":  {"noNewPrivs", set("noNewPrivs", "true")},
	"CMP-H24":  {"readOnly", set("readOnly", "true")},
	"K8S-H17":  {"readOnly", set("readOnly", "true")},
	"CMP-H25":  {"nonRoot", set("nonRoot", "true")},
	"K8S-H07":  {"nonRoot", set("nonRoot", "true")},
	"CMP-H26":  {"runtime", set("runtime", "runsc")},
	"HELM-H01": {"k8sRuntime", set("k8sRuntime", "gvisor")},
	"CMP-N03":  {"agentNet", set("agentNet", "internal")},
	"CMP-N04":  {"scorerNet", set("scorerNet", "separate")},
	"HELM-N06": {"scorerNet", set("scorerNet", "separate")},
	"HELM-N01": {"allowDomains", func(d Draft) { d["allowDomains"] = strings.Trim(strings.ReplaceAll(d["allowDomains"], "*", ""), ", ") }},
	"HELM-N02": {"allowDomains", set("allowDomains", "")},
	"CMP-R01":  {"memory", set("memory", "1g")},
	"CMP-R04":  {"memory", set("memory", "1g")},
	"K8S-R01":  {"memory", set("memory", "1g")},
	"CMP-R02":  {"cpus", set("cpus", "1")},
	"K8S-R02":  {"cpus", set("cpus", "1")},
	"CMP-R03":  {"pids", set("pids", "256")},
	"CMP-T04":  {"agentImage", nil},
	"K8S-T05":  {"agentImage", nil},
	"PVE-N07":  {"snat", set("snat", "false")},
	"PVE-N03":  {"firewall", set("firewall", "true")},
	"PVE-H08":  {"cpu", set("cpu", "x86-64-v2-AES")},
}

// fieldOf places a finding beside the field that causes it; "" means the spec as a whole.
func fieldOf(f spec.Finding) string {
	if fx, ok := fixes[f.RuleID]; ok {
		return fx.field
	}
	return ""
}

// canFix reports whether the finding has a one-key fix.
func canFix(f spec.Finding) bool {
	fx, ok := fixes[f.RuleID]
	return ok && fx.apply != nil
}

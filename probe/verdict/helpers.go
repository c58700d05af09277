package verdict

import (
	"fmt"
	"strings"

	"github.com/rangekeeper/rangekeeper/spec/advisory"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

func first(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string{}, s[:n]...), fmt.Sprintf("+%d more", len(s)-n))
	}
	return s
}

func rwWord(rw bool) string {
	if rw {
		return "rw"
	}
	return "ro"
}

func orUnreadable(s string) string {
	if s == "" {
		return "unreadable"
	}
	return s
}

// versionClass decides a host-component CVE class from the component's version through the
// advisory table: a distribution build the table cannot judge is INFO "unknown", never exposed.
func versionClass(v *Verdict, check, ver, cve string, sev catalog.Severity, missing string) {
	if ver == "" {
		v.Note = missing
		return
	}
	r := advisory.Check(cve, ver)
	ev := strings.TrimPrefix(r.Detail, check+" ")
	if r.Source != "" {
		ev += "; source: " + r.Source
	}
	fromVersions(v, check, ev)
	switch r.Status {
	case advisory.Vulnerable:
		v.Status, v.Severity = Exposed, sev
	case advisory.Fixed, advisory.Unaffected:
		v.Status = Mitigated
	default:
		v.Status, v.Severity = Unknown, catalog.SeverityInfo
		v.Note = r.Detail
	}
}

func runcClass(vs Versions, v *Verdict, cve string, sev catalog.Severity) {
	versionClass(v, "runc", vs.Runc, cve, sev, "runc version not visible from inside; pass the host's runc version")
}

func kubectlClass(vs Versions, v *Verdict) {
	if vs.Kubectl == "" {
		v.Note = "kubectl version of the harness not given"
		return
	}
	kv := parseVersion(vs.Kubectl)
	if kv.ok && fixedIn(kv, "1.0", "1.15.2", "1.14.5", "1.13.9") {
		v.Status, v.Severity = Exposed, catalog.SeverityHigh
		fromVersions(v, "kubectl", "kubectl "+vs.Kubectl+" has the cp tar traversal bugs (fixed 1.13.9/1.14.5/1.15.2)")
		return
	}
	v.Status = Mitigated
	fromVersions(v, "kubectl", "kubectl "+vs.Kubectl)
}

func crioClass(vs Versions, v *Verdict) {
	if vs.CRIO == "" {
		if v.Note == "" {
			v.Note = "CRI-O version not given"
		}
		return
	}
	cv := parseVersion(vs.CRIO)
	if cv.ok && fixedIn(cv, "1.19", "1.24", "1.23.2", "1.22.3", "1.21.6", "1.20.7", "1.19.6") {
		v.Status, v.Severity = Exposed, catalog.SeverityCritical
		fromVersions(v, "crio", "CRI-O "+vs.CRIO+" is in the CVE-2022-0811 range")
		return
	}
	v.Status = Mitigated
	fromVersions(v, "crio", "CRI-O "+vs.CRIO)
}

// engineDNSBug says when a Docker Engine version forwards DNS from internal networks
// (CVE-2024-29018), or that its distribution build cannot be judged.
func engineDNSBug(engine string) string {
	if engine == "" {
		return ""
	}
	switch r := advisory.Check("CVE-2024-29018", engine); r.Status {
	case advisory.Vulnerable:
		return "engine " + engine + " forwards DNS from internal networks (CVE-2024-29018): " + r.Detail
	case advisory.Unknown:
		return r.Detail
	}
	return ""
}

package verdict

import (
	"fmt"

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

func runcClass(vs Versions, v *Verdict, fixed string, sev catalog.Severity, cve string) {
	if vs.Runc == "" {
		v.Note = "runc version not visible from inside; pass the host's runc version"
		return
	}
	rv := parseVersion(vs.Runc)
	if !rv.ok {
		v.Note = "unparseable runc version " + vs.Runc
		return
	}
	if rv.less(parseVersion(fixed)) {
		v.Status, v.Severity = Exposed, sev
		fromVersions(v, "runc", fmt.Sprintf("%s < %s (%s)", vs.Runc, fixed, cve))
		v.Note = "by version number: a distribution build may carry a backported fix"
		return
	}
	v.Status = Mitigated
	fromVersions(v, "runc", fmt.Sprintf("%s ≥ %s", vs.Runc, fixed))
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
// (CVE-2024-29018, fixed 26.0.0 / 25.0.4 / 23.0.11; 24.x never fixed).
func engineDNSBug(engine string) string {
	ev := parseVersion(engine)
	if !ev.ok {
		return ""
	}
	if fixedIn(ev, "0.1", "26.0.0", "25.0.4", "23.0.11") {
		return "engine " + engine + " forwards DNS from internal networks (CVE-2024-29018)"
	}
	return ""
}

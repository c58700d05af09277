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
	versionClass(v, "kubectl", vs.Kubectl, "CVE-2019-11246", catalog.SeverityHigh, "kubectl version of the harness not given")
}

func crioClass(vs Versions, v *Verdict) {
	note := v.Note
	versionClass(v, "crio", vs.CRIO, "CVE-2022-0811", catalog.SeverityCritical, "CRI-O version not given")
	if note != "" && vs.CRIO == "" {
		v.Note = note
	}
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

// Package advisory decides whether a component version carries the fix for a CVE, comparing an
// upstream build against the upstream fixed releases and a distribution build (Debian, Ubuntu,
// RHEL/Fedora, Alpine) against its distribution's fixed package from a small embedded, dated and
// cited table (table.go). A distribution build the table does not cover is "unknown", never
// "vulnerable": distributions backport fixes without changing the upstream version.
package advisory

import (
	"fmt"
	"regexp"
	"strings"
)

// Status is the outcome of a check.
type Status string

const (
	Fixed      Status = "fixed"
	Vulnerable Status = "vulnerable"
	Unknown    Status = "unknown"
	Unaffected Status = "unaffected" // released before the bug
)

// UnknownDistro is the operator-facing wording for a distribution build the table cannot judge.
const UnknownDistro = "unknown: distribution build, check its advisory"

// Result is a check's outcome with the evidence that decided it.
type Result struct {
	Status Status
	Detail string // one line: the version compared and against what
	Source string // where the fixed version comes from
}

// Lookup returns the table entry of a CVE.
func Lookup(id string) (CVE, bool) {
	for _, c := range Table {
		if c.ID == id {
			return c, true
		}
	}
	return CVE{}, false
}

// upstreamVulnerable applies the entry's upstream ranges to an upstream version.
func (c CVE) upstreamVulnerable(up string) Status {
	v := parseVersion(up)
	switch {
	case !v.ok:
		return Unknown
	case v.less(parseVersion(c.FirstAffected)):
		return Unaffected
	case !v.less(parseVersion(c.Mainline)):
		return Fixed
	}
	for _, b := range c.Backports {
		bv := parseVersion(b)
		if v.at(0) == bv.at(0) && v.at(1) == bv.at(1) {
			if v.less(bv) {
				return Vulnerable
			}
			return Fixed
		}
	}
	return Vulnerable
}

// Check judges a component version string (as the engine reports it, distribution build
// included) against cveID.
func Check(cveID, ver string) Result {
	c, ok := Lookup(cveID)
	if !ok {
		return Result{Status: Unknown, Detail: cveID + " is not in the advisory table"}
	}
	b := ParseBuild(ver)
	up := c.upstreamVulnerable(b.Upstream)
	switch {
	case up == Unknown:
		return Result{Status: Unknown, Detail: fmt.Sprintf("unparseable %s version %q", c.Component, ver)}
	case up == Unaffected:
		return Result{Status: Unaffected, Detail: fmt.Sprintf("%s %s predates %s", c.Component, ver, cveID), Source: c.UpstreamSource}
	case up == Fixed:
		return Result{Status: Fixed, Detail: fmt.Sprintf("%s %s ≥ %s (%s)", c.Component, ver, c.fixedLine(b.Upstream), cveID), Source: c.UpstreamSource}
	case b.Distro == "":
		return Result{Status: Vulnerable, Detail: fmt.Sprintf("%s %s < %s (%s)", c.Component, ver, c.fixedLine(b.Upstream), cveID), Source: c.UpstreamSource}
	}
	return c.checkDistro(b)
}

// fixedLine names the fixed release of v's line.
func (c CVE) fixedLine(up string) string {
	v := parseVersion(up)
	for _, b := range c.Backports {
		bv := parseVersion(b)
		if v.at(0) == bv.at(0) && v.at(1) == bv.at(1) {
			return b
		}
	}
	return c.Mainline
}

func (c CVE) checkDistro(b Build) Result {
	unknown := Result{Status: Unknown, Detail: fmt.Sprintf("%s %s: %s (%s)", c.Component, b.Raw, UnknownDistro, c.ID)}
	if b.Package == "" || b.Release == "" {
		return unknown
	}
	for _, d := range c.Distro {
		if d.Distro != b.Distro || d.Release != b.Release {
			continue
		}
		if d.Fixed == "" {
			return Result{Status: Vulnerable, Detail: fmt.Sprintf("%s %s: %s %s published no fixed build for %s as of %s", c.Component, b.Raw, b.Distro, b.Release, c.ID, d.Checked), Source: d.Source}
		}
		if ComparePackage(b.Package, d.Fixed) >= 0 {
			return Result{Status: Fixed, Detail: fmt.Sprintf("%s %s ≥ %s, the %s %s build that fixes %s", c.Component, b.Raw, d.Fixed, b.Distro, b.Release, c.ID), Source: d.Source}
		}
		return Result{Status: Vulnerable, Detail: fmt.Sprintf("%s %s < %s, the %s %s build that fixes %s", c.Component, b.Raw, d.Fixed, b.Distro, b.Release, c.ID), Source: d.Source}
	}
	return unknown
}

var debianKernelRE = regexp.MustCompile(`Debian (\d+\.\d+\.\d+)-\S+`)

// KernelUpstream finds the upstream kernel a running kernel is built from. uname -r of Fedora
// and Alpine kernels carries it (they ship upstream stable releases); Debian's uname -v does;
// Ubuntu, RHEL and other vendor kernels carry an ABI number that says nothing about
// backported fixes, so they are a distribution build the table cannot judge.
func KernelUpstream(release, unameVersion string) (upstream, distro string) {
	if m := debianKernelRE.FindStringSubmatch(unameVersion); m != nil {
		return m[1], ""
	}
	r := strings.ToLower(release)
	switch {
	case fcRE.MatchString(r), strings.HasSuffix(r, "-lts"), strings.HasSuffix(r, "-virt"):
		return ParseBuild(release).Upstream, ""
	case strings.Contains(r, "-generic") || strings.Contains(r, "-aws") || strings.Contains(r, "-azure") || strings.Contains(r, "-gcp") ||
		strings.Contains(r, "-kvm") || strings.Contains(r, "-lowlatency") || strings.Contains(r, "-oracle") || strings.Contains(r, "ubuntu"):
		return "", "ubuntu"
	case elRE.MatchString(r) || strings.Contains(r, "amzn") || strings.Contains(r, ".uek"):
		return "", "rhel"
	case strings.HasSuffix(r, "-amd64") || strings.HasSuffix(r, "-arm64") || strings.HasSuffix(r, "-686-pae") || strings.Contains(r, "-cloud-"):
		return "", "debian"
	}
	return ParseBuild(release).Upstream, ""
}

// CheckKernel judges a running kernel (uname -r and -v) against a kernel CVE.
func CheckKernel(cveID, release, unameVersion string) Result {
	up, distro := KernelUpstream(release, unameVersion)
	if distro != "" {
		// A vendor kernel contains everything up to its base release: a base past the fix (or
		// before the bug) decides; a base in the vulnerable range depends on backports.
		base := ParseBuild(release).Upstream
		if c, ok := Lookup(cveID); ok {
			switch c.upstreamVulnerable(base) {
			case Fixed, Unaffected:
				r := Check(cveID, base)
				r.Detail = fmt.Sprintf("kernel %s (a %s build of %s): %s", release, distro, base, strings.TrimPrefix(r.Detail, "kernel "+base+" "))
				return r
			}
		}
		return Result{Status: Unknown, Detail: fmt.Sprintf("kernel %s: %s (%s)", release, UnknownDistro, cveID)}
	}
	r := Check(cveID, up)
	r.Detail = strings.Replace(r.Detail, "kernel "+up, "kernel "+release, 1)
	return r
}

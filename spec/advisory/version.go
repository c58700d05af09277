package advisory

import (
	"regexp"
	"strconv"
	"strings"
)

// Build is a component version split into the upstream release it packages and, when the string
// carries one, the distribution build around it.
type Build struct {
	Raw      string
	Upstream string // "1.1.5"
	Distro   string // "debian", "ubuntu", "rhel", "fedora", "alpine", "" (upstream build)
	Release  string // "deb12", "22.04", "el9", "fc39", "" when the string does not say
	Package  string // the distribution package version ("1.1.5+ds1-1+deb12u1"), "" when only the upstream part is known
}

var (
	debRevRE    = regexp.MustCompile(`\+deb(\d+)u\d+|~deb(\d+)`)
	ubuntuRE    = regexp.MustCompile(`ubuntu[\d.]*(?:~(\d\d\.\d\d))?`)
	elRE        = regexp.MustCompile(`\.el(\d+)`)
	fcRE        = regexp.MustCompile(`\.fc(\d+)`)
	alpineRE    = regexp.MustCompile(`-r\d+$`)
	debRepackRE = regexp.MustCompile(`[+~](ds|dfsg)\d*`)
	upstreamRE  = regexp.MustCompile(`^v?(\d+(?:\.\d+)+(?:-rc\.?\d+)?)`)
)

// ParseBuild recognises Debian (+debNuM, ~debN, +ds/+dfsg repacks), Ubuntu (-0ubuntuN~YY.MM),
// RHEL/CentOS (.elN), Fedora (.fcN) and Alpine (-rN) builds; anything else is upstream.
func ParseBuild(s string) Build {
	raw := strings.TrimSpace(s)
	b := Build{Raw: raw}
	if m := upstreamRE.FindStringSubmatch(raw); m != nil {
		b.Upstream = strings.ReplaceAll(m[1], "-rc.", "-rc")
	}
	switch {
	case strings.Contains(raw, "ubuntu"):
		b.Distro, b.Package = "ubuntu", raw
		if m := ubuntuRE.FindStringSubmatch(raw); m != nil {
			b.Release = m[1]
		}
	case debRevRE.MatchString(raw):
		m := debRevRE.FindStringSubmatch(raw)
		b.Distro, b.Package, b.Release = "debian", raw, "deb"+m[1]+m[2]
	case debRepackRE.MatchString(raw):
		b.Distro = "debian" // a Debian repack; without the revision the build is not known
		if strings.Contains(raw[debRepackRE.FindStringIndex(raw)[1]:], "-") {
			b.Package = raw // with a revision: "1.6.20~ds1-1"
		}
	case elRE.MatchString(raw):
		b.Distro, b.Package, b.Release = "rhel", raw, "el"+elRE.FindStringSubmatch(raw)[1]
	case fcRE.MatchString(raw):
		b.Distro, b.Package, b.Release = "fedora", raw, "fc"+fcRE.FindStringSubmatch(raw)[1]
	case alpineRE.MatchString(raw):
		b.Distro, b.Package = "alpine", raw
	}
	return b
}

// version is a dotted numeric version with an optional -rcN pre-release.
type version struct {
	nums []int
	rc   int // 0: release; N: -rcN (sorts before the release)
	ok   bool
}

func parseVersion(s string) version {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	var v version
	main, rest, _ := strings.Cut(s, "-")
	if i := strings.IndexAny(main, "+~ "); i >= 0 {
		main = main[:i]
	}
	for _, p := range strings.Split(main, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		v.nums = append(v.nums, n)
	}
	v.ok = len(v.nums) >= 2
	if r, ok := strings.CutPrefix(rest, "rc"); ok {
		v.rc, _ = strconv.Atoi(strings.TrimLeft(r, "."))
		if v.rc == 0 {
			v.rc = 1
		}
	}
	return v
}

func (v version) at(i int) int {
	if i < len(v.nums) {
		return v.nums[i]
	}
	return 0
}

func (v version) less(w version) bool {
	for i := 0; i < 3; i++ {
		if v.at(i) != w.at(i) {
			return v.at(i) < w.at(i)
		}
	}
	switch {
	case v.rc == w.rc, v.rc == 0:
		return false
	case w.rc == 0:
		return true
	}
	return v.rc < w.rc
}

// Less compares dotted upstream versions ("1.1.5" < "1.1.12", "1.0.0-rc6" < "1.0.0").
func Less(a, b string) bool { return parseVersion(a).less(parseVersion(b)) }

// ComparePackage orders distribution package versions the way dpkg does (epoch, upstream,
// revision; digits numerically, "~" before anything). RPM and apk versions of the shapes in
// the table order the same way.
func ComparePackage(a, b string) int {
	ea, ra := splitEpoch(a)
	eb, rb := splitEpoch(b)
	if ea != eb {
		if ea < eb {
			return -1
		}
		return 1
	}
	ua, va := splitRevision(ra)
	ub, vb := splitRevision(rb)
	if c := dpkgCompare(ua, ub); c != 0 {
		return c
	}
	return dpkgCompare(va, vb)
}

func splitEpoch(s string) (int, string) {
	if i := strings.IndexByte(s, ':'); i > 0 {
		if n, err := strconv.Atoi(s[:i]); err == nil {
			return n, s[i+1:]
		}
	}
	return 0, s
}

func splitRevision(s string) (string, string) {
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func order(c byte) int {
	switch {
	case c == '~':
		return -1
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		return int(c)
	case c == 0:
		return 0
	}
	return int(c) + 256
}

// dpkgCompare is dpkg's verrevcmp.
func dpkgCompare(a, b string) int {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		first := 0
		for (i < len(a) && !isDigit(a[i])) || (j < len(b) && !isDigit(b[j])) {
			var ac, bc int
			if i < len(a) {
				ac = order(a[i])
			}
			if j < len(b) {
				bc = order(b[j])
			}
			if ac != bc {
				if ac < bc {
					return -1
				}
				return 1
			}
			i++
			j++
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		for i < len(a) && isDigit(a[i]) && j < len(b) && isDigit(b[j]) {
			if first == 0 {
				first = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if i < len(a) && isDigit(a[i]) {
			return 1
		}
		if j < len(b) && isDigit(b[j]) {
			return -1
		}
		if first != 0 {
			if first < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

// ComponentVersion picks the most specific version string an engine reports for a component:
// Docker puts a Debian package's full version in GitCommit ("1.1.5+ds1-1+deb12u1") and only the
// upstream part in Version ("1.1.5+ds1").
func ComponentVersion(version, gitCommit string) string {
	v, g := strings.TrimSpace(version), strings.TrimSpace(gitCommit)
	if g != "" && v != "" && strings.HasPrefix(g, v) && len(g) > len(v) {
		return g
	}
	return v
}

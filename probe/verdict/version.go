package verdict

import (
	"strconv"
	"strings"
)

// version is a dotted numeric version with an optional -rcN pre-release.
type version struct {
	nums []int
	rc   int // 0: release; N: -rcN (sorts before the release)
	ok   bool
}

// parseVersion accepts "6.18.44-fc-v1147", "v1.1.12", "1.0.0-rc6", "1.29.1+k3s1".
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

// less reports v < w.
func (v version) less(w version) bool {
	for i := 0; i < 3; i++ {
		if v.at(i) != w.at(i) {
			return v.at(i) < w.at(i)
		}
	}
	switch {
	case v.rc == w.rc:
		return false
	case v.rc == 0:
		return false
	case w.rc == 0:
		return true
	}
	return v.rc < w.rc
}

// fixedIn reports whether v is fixed given per-branch fixes ("5.10.102" fixes 5.10.x from
// .102), a first fixed mainline version (everything newer is fixed), and a first affected one.
func fixedIn(v version, firstAffected, mainline string, backports ...string) (vulnerable bool) {
	if v.less(parseVersion(firstAffected)) {
		return false
	}
	if !v.less(parseVersion(mainline)) {
		return false
	}
	for _, b := range backports {
		bv := parseVersion(b)
		if v.at(0) == bv.at(0) && v.at(1) == bv.at(1) {
			return v.less(bv)
		}
	}
	return true
}

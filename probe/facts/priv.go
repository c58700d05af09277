package facts

import (
	"os"
	"strconv"
	"strings"
)

// procStatus decodes P-PRIV-01..03 from /proc/self/status.
func (c *collector) procStatus() {
	raw, err := c.read("/proc/self/status")
	if err != nil {
		c.errorf("P-PRIV-01 /proc/self/status: %v", err)
		c.report.Seccomp = Seccomp{Mode: -1, Name: "unknown"}
		c.report.Identity.UID = -1
		return
	}
	kv := keyValues(raw)
	caps := &c.report.Caps
	for key, dst := range map[string]*CapSet{"CapEff": &caps.Effective, "CapPrm": &caps.Permitted,
		"CapBnd": &caps.Bounding, "CapAmb": &caps.Ambient, "CapInh": &caps.Inheritable} {
		v, ok := kv[key]
		if !ok {
			*dst = NewCapSet(0)
			continue
		}
		set, err := ParseCapSet(v)
		if err != nil {
			c.errorf("P-PRIV-01 /proc/self/status %s: %v", key, err)
		}
		*dst = set
	}
	caps.LastCap = -1
	if v, err := strconv.Atoi(c.trimmed("/proc/sys/kernel/cap_last_cap")); err == nil {
		caps.LastCap = v
	}
	caps.derive()
	if v, ok := kv["NoNewPrivs"]; ok {
		b := v == "1"
		c.report.NoNewPrivs = &b
	}
	c.report.Seccomp = decodeSeccomp(kv)
	c.report.Identity.UID, c.report.Identity.EUID = firstTwo(kv["Uid"])
	c.report.Identity.GID, _ = firstTwo(kv["Gid"])
	c.report.Identity.Groups = []int{}
	for _, g := range strings.Fields(kv["Groups"]) {
		if n, err := strconv.Atoi(g); err == nil {
			c.report.Identity.Groups = append(c.report.Identity.Groups, n)
		}
	}
}

func decodeSeccomp(kv map[string]string) Seccomp {
	s := Seccomp{Mode: -1, Name: "unknown"}
	if v, ok := kv["Seccomp"]; ok {
		s.Mode, _ = strconv.Atoi(v)
		s.Name = map[int]string{0: "disabled", 1: "strict", 2: "filter"}[s.Mode]
	}
	s.Filters, _ = strconv.Atoi(kv["Seccomp_filters"])
	return s
}

func firstTwo(s string) (int, int) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return -1, -1
	}
	a, _ := strconv.Atoi(f[0])
	b, _ := strconv.Atoi(f[1])
	return a, b
}

// lsm is P-PRIV-05.
func (c *collector) lsm() {
	l := &c.report.LSM
	label := c.trimmed("/proc/self/attr/apparmor/current")
	if label == "" {
		label = c.trimmed("/proc/self/attr/current")
	}
	label = strings.TrimRight(label, "\x00")
	apparmorOn := c.trimmed("/sys/module/apparmor/parameters/enabled") == "Y"
	selinuxOn := c.exists("/sys/fs/selinux/enforce")
	switch {
	case strings.Count(label, ":") >= 2:
		l.SELinux = label
		l.Confined = !strings.Contains(label, ":spc_t:") && !strings.Contains(label, ":unconfined_t:")
	case label != "":
		l.AppArmor = label
		l.Confined = label != "unconfined"
	case apparmorOn:
		l.AppArmor = "unconfined"
	}
	if selinuxOn && l.SELinux == "" {
		l.SELinux = "enforce=" + c.trimmed("/sys/fs/selinux/enforce")
	}
}

var dangerousGroupNames = map[string]bool{"docker": true, "lxd": true, "disk": true, "root": true,
	"sudo": true, "wheel": true, "kvm": true}

// identity is P-PRIV-06 and P-NS-02.
func (c *collector) identity() {
	id := &c.report.Identity
	if id.UID == -1 {
		id.UID, id.EUID, id.GID = os.Getuid(), os.Geteuid(), os.Getgid()
	}
	id.Root = id.EUID == 0
	id.UIDMap = strings.Join(strings.Fields(c.trimmed("/proc/self/uid_map")), " ")
	id.GIDMap = strings.Join(strings.Fields(c.trimmed("/proc/self/gid_map")), " ")
	id.UserNS = id.UIDMap != "" && id.UIDMap != "0 0 4294967295"
	groups, _ := c.read("/etc/group")
	mine := map[int]bool{id.GID: true}
	for _, g := range id.Groups {
		mine[g] = true
	}
	for _, line := range strings.Split(groups, "\n") {
		f := strings.Split(line, ":")
		if len(f) < 3 || !dangerousGroupNames[f[0]] {
			continue
		}
		if gid, err := strconv.Atoi(f[2]); err == nil && mine[gid] && !(f[0] == "root" && id.Root) {
			id.DangerousGroups = append(id.DangerousGroups, f[0])
		}
	}
}

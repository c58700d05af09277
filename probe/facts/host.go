package facts

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// devices is P-DEV-01/02.
func (c *collector) devices() {
	d := &c.report.Devices
	d.Critical, d.High = []string{}, []string{}
	_ = filepath.WalkDir(c.path("/dev"), func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel := "/" + strings.TrimPrefix(strings.TrimPrefix(p, strings.TrimSuffix(c.path("/"), "/")), "/")
		if e.IsDir() {
			switch rel {
			case "/dev", "/dev/dri", "/dev/net", "/dev/mapper":
				return nil
			}
			if rel != "/dev" {
				return filepath.SkipDir // pts, shm, mqueue, disk/by-*: bounded walk
			}
		}
		if e.Type()&os.ModeDevice == 0 {
			return nil
		}
		d.Count++
		name := strings.TrimPrefix(rel, "/dev/")
		switch {
		case e.Type()&os.ModeCharDevice == 0: // block device
			d.Critical = append(d.Critical, rel)
		case name == "mem" || name == "kmem" || name == "port" || name == "kmsg":
			d.Critical = append(d.Critical, rel)
		case name == "kvm" || name == "fuse" || name == "net/tun" || strings.HasPrefix(name, "vhost-") ||
			strings.HasPrefix(name, "nvidia") || strings.HasPrefix(name, "dri/"):
			d.High = append(d.High, rel)
		}
		return nil
	})
	if list := c.trimmed("/sys/fs/cgroup/devices/devices.list"); strings.Contains(list, "a *:* rwm") {
		d.AllowAll = true
	}
}

// cgroup is P-RES-01..05.
func (c *collector) cgroup() {
	g := &c.report.Cgroup
	self := c.trimmed("/proc/self/cgroup")
	lines := strings.Split(self, "\n")
	if c.exists("/sys/fs/cgroup/cgroup.controllers") {
		g.Version = 2
	} else if c.exists("/sys/fs/cgroup/memory") || c.exists("/sys/fs/cgroup/pids") {
		g.Version = 1
	}
	for _, l := range lines {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if g.Version == 2 && f[0] == "0" || g.Version != 2 && (strings.Contains(f[1], "memory") || g.Path == "") {
			g.Path = f[2]
		}
	}
	g.Private = g.Path == "/"
	if g.Version == 2 {
		g.MemoryMax = c.trimmed("/sys/fs/cgroup/memory.max")
		g.PidsMax = c.trimmed("/sys/fs/cgroup/pids.max")
		g.CPUMax = c.trimmed("/sys/fs/cgroup/cpu.max")
		g.MemoryCap = g.MemoryMax != "" && g.MemoryMax != "max"
		g.PidsCap = g.PidsMax != "" && g.PidsMax != "max"
		g.CPUCap = g.CPUMax != "" && !strings.HasPrefix(g.CPUMax, "max")
		return
	}
	g.MemoryMax = c.trimmed("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	g.PidsMax = c.trimmed("/sys/fs/cgroup/pids/pids.max")
	g.CPUMax = c.trimmed("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
	if g.CPUMax == "" {
		g.CPUMax = c.trimmed("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us")
	}
	if v, err := strconv.ParseUint(g.MemoryMax, 10, 64); err == nil {
		g.MemoryCap = v < 1<<62 // ~9223372036854771712 means unlimited
	}
	g.PidsCap = g.PidsMax != "" && g.PidsMax != "max"
	g.CPUCap = g.CPUMax != "" && g.CPUMax != "-1"
}

// kernel is P-KRN-01, 06, 08, 09, 10.
func (c *collector) kernel() {
	k := &c.report.Kernel
	var u unix.Utsname
	if c.root == "/" && unix.Uname(&u) == nil {
		k.Release = unix.ByteSliceToString(u.Release[:])
		k.Version = unix.ByteSliceToString(u.Version[:])
	} else {
		k.Release = c.trimmed("/proc/sys/kernel/osrelease")
		k.Version = c.trimmed("/proc/sys/kernel/version")
	}
	k.Sysctls = map[string]string{}
	for _, name := range []string{"kernel/unprivileged_bpf_disabled", "kernel/kptr_restrict", "kernel/dmesg_restrict",
		"kernel/perf_event_paranoid", "kernel/randomize_va_space", "kernel/yama/ptrace_scope",
		"kernel/unprivileged_userns_clone", "user/max_user_namespaces", "net/ipv4/conf/all/route_localnet",
		"net/ipv4/ip_forward", "kernel/core_pattern"} {
		if v := c.trimmed("/proc/sys/" + name); v != "" {
			k.Sysctls[strings.ReplaceAll(name, "/", ".")] = v
		}
	}
	k.CorePatternPipe = strings.HasPrefix(k.Sysctls["kernel.core_pattern"], "|")
	k.UnprivilegedBPF = k.Sysctls["kernel.unprivileged_bpf_disabled"] == "0"
	k.RouteLocalnet = k.Sysctls["net.ipv4.conf.all.route_localnet"] == "1"
	k.ModulesListVisible = c.exists("/proc/modules")
	if c.root == "/" {
		n, _, errno := syscall.Syscall(syscall.SYS_SYSLOG, 10 /* SYSLOG_ACTION_SIZE_BUFFER: reads nothing */, 0, 0)
		k.SyslogReadable = errno == 0 && n > 0
	}
	if s, err := c.readSmall("/proc/kallsyms", 256); err == nil {
		first := strings.Fields(s)
		k.KallsymsAddresses = len(first) > 0 && strings.Trim(first[0], "0") != ""
	}
	for _, p := range []string{"/proc/kcore", "/proc/sched_debug", "/proc/timer_list", "/proc/config.gz", "/sys/kernel/vmcoreinfo", "/dev/mem", "/dev/kmsg"} {
		if c.exists(p) && faccess(c.path(p), unix.R_OK) == nil {
			k.InterestingReadable = append(k.InterestingReadable, p)
		}
	}
}

// runtime is P-ID-01..05; it runs after the other host checks and reuses their results.
func (c *collector) runtime() {
	r := &c.report.Runtime
	r.Markers = []string{}
	mark := func(m, manager string) {
		r.Markers = append(r.Markers, m)
		if r.Manager == "" {
			r.Manager = manager
		}
	}
	if c.exists("/.dockerenv") {
		mark("/.dockerenv", "docker")
	}
	if c.exists("/run/.containerenv") {
		mark("/run/.containerenv", "podman")
	}
	for _, kv := range c.opt.Env {
		if v, ok := strings.CutPrefix(kv, "container="); ok {
			mark("env container="+v, v)
		}
		if v, ok := strings.CutPrefix(kv, "KUBERNETES_SERVICE_HOST="); ok && v != "" {
			r.Kubernetes = true
		}
	}
	if v := c.trimmed("/run/systemd/container"); v != "" {
		mark("/run/systemd/container="+v, v)
	}
	cg := c.trimmed("/proc/self/cgroup") + "\n" + c.trimmed("/proc/1/cgroup")
	for _, p := range []struct{ sub, manager string }{{"kubepods", "kubernetes"}, {"/docker/", "docker"},
		{"docker-", "docker"}, {"/containerd", "containerd"}, {"cri-containerd", "containerd"}, {"crio-", "crio"},
		{"libpod", "podman"}, {"/lxc/", "lxc"}} {
		if strings.Contains(cg, p.sub) {
			mark("cgroup "+p.sub, p.manager)
			if p.manager == "kubernetes" {
				r.Kubernetes = true
			}
		}
	}
	if c.exists("/var/run/secrets/kubernetes.io") || c.exists("/run/secrets/kubernetes.io") {
		r.Kubernetes = true
	}
	if r.Kubernetes {
		r.Manager = "kubernetes"
	}
	k := c.report.Kernel
	if strings.HasPrefix(k.Release, "4.4.0") && strings.Contains(k.Version, "Sun Jan 10 15:06:54 PST 2016") || !k.ModulesListVisible && c.exists("/proc/self") && c.gvisorMount() {
		r.GVisor = true
		r.Hints = append(r.Hints, "gVisor synthetic kernel or gofer rootfs")
	}
	if strings.Contains(strings.ToLower(k.Release), "kata") || c.report.Mounts.rootFSType() == "virtiofs" {
		r.Kata = true
		r.Hints = append(r.Hints, "Kata guest (kata kernel or virtiofs rootfs)")
	}
	for _, f := range []string{"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"} {
		v := c.trimmed(f)
		for _, h := range []string{"QEMU", "KVM", "Amazon EC2", "Google", "Microsoft Corporation", "VMware", "Xen", "Firecracker", "innotek", "Proxmox"} {
			if strings.Contains(v, h) && r.VM == "" {
				r.VM = h
			}
		}
	}
	if r.VM == "" && strings.Contains(c.trimmed("/proc/cpuinfo"), " hypervisor") {
		r.VM = "hypervisor (cpuid)"
	}
	r.Container = len(r.Markers) > 0 || r.GVisor || r.Kata || r.Kubernetes ||
		!c.report.Namespaces.HostPID && c.report.Namespaces.Links["pid"] != ""
	if !r.Container {
		// A VM's own interfaces are not a host network namespace.
		c.report.Namespaces.HostNet, c.report.Namespaces.HostNetHints = false, nil
	}
}

func (c *collector) gvisorMount() bool {
	return c.report.Mounts.rootFSType() == "9p"
}

func (m Mounts) rootFSType() string { return m.rootType }

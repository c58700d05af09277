package facts

import (
	"os"
	"strconv"
	"strings"
)

// Initial-namespace inode numbers are fixed by the kernel (include/linux/proc_ns.h).
var initialNS = map[string]uint64{
	"ipc": 0xEFFFFFFF, "uts": 0xEFFFFFFE, "user": 0xEFFFFFFD, "pid": 0xEFFFFFFC,
	"cgroup": 0xEFFFFFFB, "time": 0xEFFFFFFA,
}

// hostIfacePrefixes are interfaces that exist only in a host network namespace.
var hostIfacePrefixes = []string{"docker0", "cni0", "cilium_", "flannel", "cali", "vxlan", "virbr",
	"vmbr", "br-", "veth", "kube-", "weave", "tunl0", "enp", "eno", "ens", "wlp", "wlan"}

// namespaces is P-NS-01, P-NS-03 and P-NS-04.
func (c *collector) namespaces() {
	n := &c.report.Namespaces
	n.Links = map[string]string{}
	host := map[string]bool{}
	for _, kind := range []string{"pid", "net", "mnt", "ipc", "uts", "user", "cgroup", "time"} {
		link, err := os.Readlink(c.path("/proc/self/ns/" + kind))
		if err != nil {
			continue
		}
		n.Links[kind] = link
		if want, ok := initialNS[kind]; ok && nsInode(link) == want {
			host[kind] = true
		}
	}
	n.HostPID, n.HostIPC, n.HostUTS, n.HostCgroup, n.HostUser = host["pid"], host["ipc"], host["uts"], host["cgroup"], host["user"]
	entries, _ := os.ReadDir(c.path("/proc"))
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n.Processes++
		}
	}
	n.PID1 = c.trimmed("/proc/1/comm")
	// Host network heuristics: host-only interfaces, host unix sockets.
	dev, _ := c.read("/proc/net/dev")
	for _, line := range strings.Split(dev, "\n") {
		name, _, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		for _, p := range hostIfacePrefixes {
			if strings.HasPrefix(name, p) {
				n.HostNetHints = append(n.HostNetHints, "interface "+name)
				break
			}
		}
	}
	unixSocks, _ := c.read("/proc/net/unix")
	for _, marker := range []string{"@/containerd-shim/", "/run/systemd/", "/run/containerd/", "/var/run/docker.sock", "/run/docker.sock"} {
		if strings.Contains(unixSocks, marker) {
			n.HostNetHints = append(n.HostNetHints, "unix socket "+marker)
		}
	}
	n.HostNet = len(n.HostNetHints) > 0
}

// nsInode parses "pid:[4026531836]".
func nsInode(link string) uint64 {
	i, j := strings.IndexByte(link, '['), strings.IndexByte(link, ']')
	if i < 0 || j <= i {
		return 0
	}
	v, _ := strconv.ParseUint(link[i+1:j], 10, 64)
	return v
}

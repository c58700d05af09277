package facts

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// toolCategories is the §4.10 inventory list by category.
var toolCategories = map[string][]string{
	"shell":     {"sh", "bash", "ash", "dash", "zsh", "busybox"},
	"container": {"docker", "kubectl", "crictl", "ctr", "nerdctl", "podman", "runc", "helm"},
	"escape":    {"nsenter", "unshare", "chroot", "mount", "umount", "capsh", "setcap", "getcap", "insmod", "modprobe", "gdb", "strace", "sudo", "su"},
	"network":   {"curl", "wget", "nc", "ncat", "netcat", "socat", "nmap", "ssh", "scp", "tcpdump", "ip", "iptables", "nft", "ping", "dig", "nslookup", "host", "telnet", "ftp"},
	"compiler":  {"gcc", "cc", "g++", "clang", "make", "go", "rustc", "cargo", "tcc", "as", "ld"},
	"runtime":   {"python", "python3", "perl", "ruby", "node", "php", "lua", "java"},
	"package":   {"apt", "apt-get", "dpkg", "apk", "yum", "dnf", "rpm", "pip", "pip3", "npm", "gem"},
}

var wellKnownBinDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// tooling scans PATH and well-known bin dirs (stat only, nothing is executed).
func (c *collector) tooling() {
	dirs := append([]string{}, wellKnownBinDirs...)
	for _, kv := range c.opt.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = append(strings.Split(v, ":"), dirs...)
		}
	}
	found := map[string][]string{}
	for cat, names := range toolCategories {
		for _, n := range names {
			for _, d := range dirs {
				if d == "" || !filepath.IsAbs(d) {
					continue
				}
				p := filepath.Join(d, n)
				fi, err := os.Stat(c.path(p))
				if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					found[cat] = append(found[cat], n)
					break
				}
			}
		}
		sort.Strings(found[cat])
	}
	c.report.Tooling = Tooling{Found: found}
}

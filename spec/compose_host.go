package spec

import (
	"fmt"
	"path"
	"strings"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Compose host-axis rules (hardening.md §1.1).

func setOf(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func normCap(c string) string { return catalog.NormCap(c) }

// secOpt is one normalised security_opt entry and its index in the list.
type secOpt struct {
	val string
	idx int
}

// secOpts normalises security_opt entries to key -> value ("seccomp" -> "unconfined"); both
// ":" and "=" separators and any case are accepted, as docker-bench does.
func secOpts(svc map[string]any) map[string]secOpt {
	out := map[string]secOpt{}
	for i, o := range strList(svc["security_opt"]) {
		o = strings.ToLower(strings.TrimSpace(o))
		cut := strings.IndexAny(o, ":=")
		k, v := o, ""
		if cut >= 0 {
			k, v = o[:cut], o[cut+1:]
		}
		out[k] = secOpt{v, i}
	}
	return out
}

// hostBinds yields each volume that binds a host path, including named volumes whose driver_opts
// make them a bind in disguise.
func (c *ctx) hostBinds(svc map[string]any, fn func(i int, src, target string, rw bool, propagation string)) {
	for i, raw := range getList(svc, "volumes") {
		vol, _ := raw.(map[string]any)
		src, typ := getString(vol, "source"), getString(vol, "type")
		ro, _ := getBool(vol, "read_only")
		prop := getString(vol, "bind", "propagation")
		switch typ {
		case "bind":
			fn(i, src, getString(vol, "target"), !ro, prop)
		case "volume":
			if dev := getString(c.doc.model, "volumes", src, "driver_opts", "device"); dev != "" && strings.Contains(getString(c.doc.model, "volumes", src, "driver_opts", "o"), "bind") {
				fn(i, dev, getString(vol, "target"), !ro, prop)
			}
		}
	}
}

func init() {
	register(
		ruleDef{Rule: cr("CMP-H01", "Privileged container", crit, axH,
			"privileged: true gives the container every capability, no seccomp/AppArmor, all host devices and a writable /sys",
			"remove privileged: true and add only the capabilities the task needs"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if b, _ := getBool(s, "privileged"); b {
						c.report("CMP-H01", svcPath(n, "privileged"), 0, "service %q runs privileged: host-root equivalent", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H02", "Container-engine socket mounted", crit, axH,
			"a container-engine API socket is mounted: the engine API is host root",
			"remove the socket mount; give the harness, not the agent, access to the engine"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					c.hostBinds(s, func(i int, src, tgt string, _ bool, _ string) {
						if catalog.ExposesEngineSocket(src) || catalog.EngineSocketRE.MatchString(tgt) {
							c.report("CMP-H02", svcPath(n, "volumes", i), 0, "service %q mounts the engine socket (host %s)", n, path.Clean(src))
						}
					})
				})
			}},
		ruleDef{Rule: cr("CMP-H03", "use_api_socket enabled", crit, axH,
			"use_api_socket mounts the engine API socket and the user's registry credentials into the container",
			"remove use_api_socket"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if b, _ := getBool(s, "use_api_socket"); b {
						c.report("CMP-H03", svcPath(n, "use_api_socket"), 0, "service %q has use_api_socket: true (engine socket plus registry credentials)", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H04", "Sensitive host directory mounted", high, axH,
			"a host system directory is bind-mounted into the container",
			"drop the bind mount; copy the files the task needs into the image or a named volume"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					c.hostBinds(s, func(i int, src, _ string, rw bool, _ string) {
						if sev, ok := sensitiveMount(src, rw); ok {
							mode := "read-only"
							if rw {
								mode = "writable"
							}
							c.report("CMP-H04", svcPath(n, "volumes", i), sev, "service %q mounts host %s %s", n, path.Clean(src), mode)
						}
					})
				})
			}},
		ruleDef{Rule: cr("CMP-H05", "Host bind mount / mount propagation", med, axH,
			"a host directory is bind-mounted (a host-data channel); shared propagation lets mounts reach the host",
			"use a named volume or copy files in; never use shared/rshared propagation"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					c.hostBinds(s, func(i int, src, _ string, rw bool, prop string) {
						switch prop {
						case "shared", "rshared":
							c.report("CMP-H05", svcPath(n, "volumes", i), high, "service %q binds %s with %s propagation: mounts made inside appear on the host", n, src, prop)
							return
						case "slave", "rslave":
							c.report("CMP-H05", svcPath(n, "volumes", i), med, "service %q binds %s with %s propagation", n, src, prop)
							return
						}
						if _, sens := sensitiveMount(src, rw); sens || catalog.ExposesEngineSocket(src) {
							return
						}
						if rw {
							c.report("CMP-H05", svcPath(n, "volumes", i), med, "service %q has a writable bind of host path %s", n, src)
						} else {
							c.report("CMP-H05", svcPath(n, "volumes", i), low, "service %q has a read-only bind of host path %s", n, src)
						}
					})
				})
			}},
		ruleDef{Rule: cr("CMP-H06", "Dangerous capability added", crit, axH,
			"cap_add grants a capability that is an escape primitive or re-enables blocked syscalls",
			"remove the capability from cap_add"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for i, cp := range strList(s["cap_add"]) {
						switch k := normCap(cp); {
						case catalog.CriticalCaps[k]:
							c.report("CMP-H06", svcPath(n, "cap_add", i), crit, "service %q adds %s", n, k)
						case catalog.HighCaps[k]:
							c.report("CMP-H06", svcPath(n, "cap_add", i), high, "service %q adds %s", n, k)
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H07", "Capability added", med, axH,
			"cap_add grants a capability (least privilege)",
			"remove the capability unless the task needs it"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for i, cp := range strList(s["cap_add"]) {
						k := normCap(cp)
						if catalog.CriticalCaps[k] || catalog.HighCaps[k] {
							continue // CMP-H06 already says it louder
						}
						sev := low
						if !catalog.DockerDefaultCaps[k] {
							sev = med
						}
						c.report("CMP-H07", svcPath(n, "cap_add", i), sev, "service %q adds capability %s", n, k)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H08", "Capabilities not dropped", med, axH,
			"cap_drop does not contain ALL, so Docker's 14 default capabilities stay",
			"add cap_drop: [ALL] and add back only what is needed"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if !hasCap(s["cap_drop"], "ALL") {
						c.report("CMP-H08", svcPath(n), 0, "service %q does not drop ALL capabilities", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H09", "NET_RAW not dropped", low, axH,
			"NET_RAW allows raw/packet sockets (ARP/ICMP crafting, sniffing, packet-socket kernel bugs)",
			"drop ALL (or at least NET_RAW) in cap_drop"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if b, _ := getBool(s, "privileged"); b {
						return
					}
					dropped := hasCap(s["cap_drop"], "ALL") || hasCap(s["cap_drop"], "NET_RAW")
					if !dropped || hasCap(s["cap_add"], "NET_RAW") {
						c.report("CMP-H09", svcPath(n), 0, "service %q keeps NET_RAW", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H10", "Seccomp disabled", high, axH,
			"seccomp is unconfined: every syscall used by the kernel-bug escape classes is reachable",
			"remove seccomp:unconfined (keep Docker's default profile)"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					o, ok := secOpts(s)["seccomp"]
					if !ok {
						return
					}
					if o.val == "unconfined" {
						sev := high
						for _, cp := range strList(s["cap_add"]) {
							if catalog.CriticalCaps[normCap(cp)] || catalog.HighCaps[normCap(cp)] {
								sev = crit
							}
						}
						c.report("CMP-H10", svcPath(n, "security_opt", o.idx), sev, "service %q runs with seccomp unconfined", n)
					} else {
						c.report("CMP-H10", svcPath(n, "security_opt", o.idx), info, "service %q uses a custom seccomp profile %s; review it (defaultAction SCMP_ACT_ALLOW is as bad as unconfined)", n, o.val)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H11", "AppArmor disabled", high, axH,
			"apparmor:unconfined drops the docker-default profile (which denies /proc/sys writes and mounts)",
			"remove apparmor:unconfined"),
			check: secOptRule("CMP-H11", "apparmor", "unconfined", "runs with AppArmor unconfined")},
		ruleDef{Rule: cr("CMP-H12", "SELinux separation disabled", high, axH,
			"label:disable / spc_t disables SELinux separation",
			"remove the label option"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if o, ok := secOpts(s)["label"]; ok && (o.val == "disable" || strings.Contains(o.val, "spc_t")) {
						c.report("CMP-H12", svcPath(n, "security_opt", o.idx), 0, "service %q disables SELinux labels (%s)", n, o.val)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H13", "no-new-privileges not set", med, axH,
			"without no-new-privileges, setuid binaries and file capabilities can raise privileges",
			"add security_opt: [\"no-new-privileges:true\"]"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					o, ok := secOpts(s)["no-new-privileges"]
					if !ok || (o.val != "" && o.val != "true") {
						c.report("CMP-H13", svcPath(n), 0, "service %q does not set no-new-privileges", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H14", "/proc and /sys masks removed", high, axH,
			"systempaths=unconfined removes Docker's masked and read-only kernel paths",
			"remove systempaths=unconfined"),
			check: secOptRule("CMP-H14", "systempaths", "unconfined", "unmasks /proc and /sys (systempaths=unconfined)")},
		ruleDef{Rule: cr("CMP-H15", "Writable cgroups", high, axH,
			"writable-cgroups=true mounts cgroupfs read-write (release_agent class on cgroup v1)",
			"remove writable-cgroups=true"),
			check: secOptRule("CMP-H15", "writable-cgroups", "true", "mounts cgroupfs writable")},
		ruleDef{Rule: cr("CMP-H16", "Host PID namespace", crit, axH,
			"pid: host shows host processes (and /proc/<pid>/root); with SYS_PTRACE it is an escape",
			"remove pid: host"),
			check: modeRule("CMP-H16", "pid", map[string]int{"host": int(crit), "service:": int(med), "container:": int(med)})},
		ruleDef{Rule: cr("CMP-H17", "Host IPC namespace", high, axH,
			"ipc: host shares host shared memory and semaphores",
			"remove ipc: host (use private)"),
			check: modeRule("CMP-H17", "ipc", map[string]int{"host": int(high), "shareable": int(low), "service:": int(low), "container:": int(low)})},
		ruleDef{Rule: cr("CMP-H18", "Host UTS namespace", low, axH,
			"uts: host shares the host's hostname",
			"remove uts: host"),
			check: modeRule("CMP-H18", "uts", map[string]int{"host": int(low)})},
		ruleDef{Rule: cr("CMP-H19", "Host user namespace", high, axH,
			"userns_mode: host opts out of userns-remap: container root is host uid 0",
			"remove userns_mode: host"),
			check: modeRule("CMP-H19", "userns_mode", map[string]int{"host": int(high)})},
		ruleDef{Rule: cr("CMP-H20", "Host cgroup namespace", med, axH,
			"cgroup: host shows host cgroup paths; with writable cgroupfs it is the release_agent precondition",
			"remove cgroup: host / cgroup_parent"),
			check: func(c *ctx) {
				modeRule("CMP-H20", "cgroup", map[string]int{"host": int(med)})(c)
				c.composeServices(func(n string, s map[string]any) {
					if getString(s, "cgroup_parent") != "" {
						c.report("CMP-H20", svcPath(n, "cgroup_parent"), low, "service %q sets cgroup_parent", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H21", "Host devices exposed", crit, axH,
			"a host device is passed into the container",
			"remove the device; raw host disks are the host filesystem"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for i, raw := range getList(s, "devices") {
						src := getString(raw, "source")
						if src == "" {
							src, _, _ = strings.Cut(fmt.Sprint(raw), ":")
						}
						sev := med
						switch {
						case catalog.CriticalDeviceRE.MatchString(src):
							sev = crit
						case catalog.HighDeviceRE.MatchString(src):
							sev = high
						}
						c.report("CMP-H21", svcPath(n, "devices", i), sev, "service %q gets host device %s", n, src)
					}
					for i, r := range strList(s["device_cgroup_rules"]) {
						f := strings.Fields(r)
						if len(f) >= 2 && (f[0] == "a" || f[0] == "b") && f[1] == "*:*" {
							c.report("CMP-H21", svcPath(n, "device_cgroup_rules", i), crit, "service %q allows all %s devices (%q)", n, map[string]string{"a": "host", "b": "block"}[f[0]], r)
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H22", "GPU exposed", med, axH,
			"GPUs expose /dev/nvidia* and the host driver ioctl surface",
			"remove gpus / GPU device reservations unless the eval needs them"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if s["gpus"] != nil {
						c.report("CMP-H22", svcPath(n, "gpus"), 0, "service %q requests GPUs", n)
					}
					for i, d := range getList(s, "deploy", "resources", "reservations", "devices") {
						for _, cp := range strList(get(d, "capabilities")) {
							if strings.EqualFold(cp, "gpu") {
								c.report("CMP-H22", svcPath(n, "deploy", "resources", "reservations", "devices", i), 0, "service %q reserves a GPU device", n)
							}
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H23", "Unsafe sysctl", med, axH,
			"a sysctl outside the Pod Security safe list is set",
			"remove the sysctl; never set route_localnet=1"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for _, e := range envVars(s["sysctls"]) {
						switch rl, unsafe := catalog.SysctlRisk(e.name, e.value); {
						case rl:
							c.report("CMP-H23", svcPath(n, "sysctls", e.key), high, "service %q sets %s=%s: breaks the 127/8 boundary", n, e.name, e.value)
						case unsafe:
							c.report("CMP-H23", svcPath(n, "sysctls", e.key), med, "service %q sets unsafe sysctl %s", n, e.name)
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H24", "Writable root filesystem", med, axH,
			"the root filesystem is writable: the agent can replace binaries the harness later runs",
			"set read_only: true and give scratch space with tmpfs"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if b, _ := getBool(s, "read_only"); !b {
						c.report("CMP-H24", svcPath(n, "read_only"), 0, "service %q has a writable root filesystem", n)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H25", "Runs as root", med, axH,
			"the service runs as root (unless the image sets a non-root USER); most escapes presuppose root",
			"set user: \"1000:1000\" (a non-root uid)"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					u := strings.TrimSpace(getString(s, "user"))
					if u == "" || u == "root" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root:") {
						c.report("CMP-H25", svcPath(n, "user"), 0, "service %q runs as root (user %q)", n, u)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H26", "No sandboxed runtime for the agent", med, axH,
			"the agent runs on runc: no second kernel boundary (gVisor/Kata) in front of kernel bugs (severity follows lint.policy.sandboxed_runtime)",
			"set runtime: runsc (gVisor) or a Kata runtime on the agent service"),
			check: func(c *ctx) {
				sev, why := c.runtimeSeverity()
				for _, n := range c.compose.agentNames() {
					rt := getString(c.compose.services[n], "runtime")
					if !catalog.IsSandboxedRuntime(rt) {
						c.report("CMP-H26", svcPath(n, "runtime"), sev, "agent service %q has no sandboxed runtime (runtime %q); %s", n, rt, why)
					}
				}
			}},
		ruleDef{Rule: cr("CMP-H27", "Privileged lifecycle hook", high, axH,
			"a post_start/pre_stop hook runs privileged (or as root in a non-root service) inside the container",
			"drop privileged/user root from the hook"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					svcUser := getString(s, "user")
					for _, hk := range []string{"post_start", "pre_stop"} {
						for i, h := range getList(s, hk) {
							priv, _ := getBool(h, "privileged")
							u := getString(h, "user")
							if priv || ((u == "root" || u == "0") && svcUser != "" && svcUser != "root" && svcUser != "0") {
								c.report("CMP-H27", svcPath(n, hk, i), 0, "service %q has a privileged %s hook", n, hk)
							}
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H28", "OOM killer disabled", med, axH,
			"oom_kill_disable / negative oom_score_adj make other tenants and the harness die first",
			"remove oom_kill_disable and negative oom_score_adj"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if b, _ := getBool(s, "oom_kill_disable"); b {
						c.report("CMP-H28", svcPath(n, "oom_kill_disable"), med, "service %q disables the OOM killer", n)
					}
					if v, ok := num(s["oom_score_adj"]); ok && v < 0 {
						c.report("CMP-H28", svcPath(n, "oom_score_adj"), low, "service %q lowers its OOM score (%v)", n, v)
					}
				})
			}},
		ruleDef{Rule: cr("CMP-H29", "Working directory in a system path", high, axH,
			"working_dir under /proc, /dev or /boot (the runc CVE-2024-21626 pattern)",
			"use a normal working directory such as /work"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if wd := getString(s, "working_dir"); catalog.SystemWorkdir(wd) {
						c.report("CMP-H29", svcPath(n, "working_dir"), 0, "service %q has working_dir %s", n, wd)
					}
				})
			}},
	)
}

// sensitiveMount classifies a host bind source against the sensitive host directories.
func sensitiveMount(src string, rw bool) (catalog.Severity, bool) {
	if catalog.EngineSocketRE.MatchString(path.Clean(src)) {
		return 0, false // the socket is CMP-H02's, not a directory
	}
	critical, sensitive := catalog.HostDirRisk(src)
	switch {
	case critical && rw:
		return crit, true
	case sensitive:
		return high, true
	}
	return 0, false
}

func hasCap(v any, want string) bool {
	for _, c := range strList(v) {
		if normCap(c) == want {
			return true
		}
	}
	return false
}

func secOptRule(id, key, val, what string) func(*ctx) {
	return func(c *ctx) {
		c.composeServices(func(n string, s map[string]any) {
			if o, ok := secOpts(s)[key]; ok && o.val == val {
				c.report(id, svcPath(n, "security_opt", o.idx), 0, "service %q %s", n, what)
			}
		})
	}
}

// modeRule flags namespace-mode keys (pid, ipc, uts, ...) by exact value or prefix.
func modeRule(id, key string, sevs map[string]int) func(*ctx) {
	return func(c *ctx) {
		c.composeServices(func(n string, s map[string]any) {
			v := strings.ToLower(getString(s, key))
			if v == "" {
				return
			}
			for want, sev := range sevs {
				if v == want || (strings.HasSuffix(want, ":") && strings.HasPrefix(v, want)) {
					c.report(id, svcPath(n, key), sevFrom(sev), "service %q sets %s: %s", n, key, v)
					return
				}
			}
		})
	}
}

package spec

import (
	"regexp"
	"strings"
)

// Proxmox rules (hardening.md §3): the inspect_proxmox_sandbox eval config, raw qm configs and
// PVE firewall files.

var (
	qmPrefixRE = func(p string) *regexp.Regexp { return regexp.MustCompile(`^` + p + `\d+$`) }
	hostpciRE  = qmPrefixRE("hostpci")
	usbRE      = qmPrefixRE("usb")
	serialRE   = qmPrefixRE("serial")
	parallelRE = qmPrefixRE("parallel")
	virtiofsRE = qmPrefixRE("virtiofs")
)

func (c *ctx) vms() []any       { return getList(c.doc.model, "vms_config") }
func vmDefaultList(c *ctx) bool { _, set := c.doc.model["vms_config"]; return !set }

func init() {
	pve := []Format{FormatProxmox}
	qm := []Format{FormatQM}
	fw := []Format{FormatPVEFirewall}
	both := []Format{FormatProxmox, FormatQM}
	register(
		ruleDef{Rule: cr("PVE-N01", "NIC without a bridge (user-mode NAT)", high, axN,
			"a NIC has no bridge=: QEMU user networking NATs through the host outside any bridge firewall",
			"attach the NIC to an isolated SDN vnet bridge"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if qmNetIndexRE.MatchString(l.key) && qmOptions(l.value)["bridge"] == "" {
						c.qmReport("PVE-N01", l, 0, "%s has no bridge: user-mode NAT egress through the host", l.key)
					}
				})
			}},
		ruleDef{Rule: cr("PVE-N02", "NIC on a LAN bridge", crit, axN,
			"a NIC is on a bridge with a physical uplink: the VM is on the host's LAN",
			"attach the NIC to an isolated vnet, never vmbr0"), formats: qm,
			check: func(c *ctx) {
				lan := setOf(c.opts.LANBridges...)
				if len(lan) == 0 {
					lan = setOf("vmbr0")
				}
				c.qmLines(func(l qmLine) {
					if b := qmOptions(l.value)["bridge"]; qmNetIndexRE.MatchString(l.key) && lan[b] {
						c.qmReport("PVE-N02", l, 0, "%s is bridged to %s, the host's LAN", l.key, b)
					}
				})
			}},
		ruleDef{Rule: cr("PVE-N03", "NIC firewall off", high, axN,
			"the NIC firewall flag is off: no PVE firewall rule applies to this VM's traffic",
			"set firewall=1 on every NIC (firewall: true in VmConfig)"), formats: both,
			check: func(c *ctx) {
				if c.doc.format == FormatQM {
					c.qmLines(func(l qmLine) {
						if qmNetIndexRE.MatchString(l.key) && qmOptions(l.value)["firewall"] != "1" {
							c.qmReport("PVE-N03", l, 0, "%s has no firewall=1", l.key)
						}
					})
					return
				}
				if vmDefaultList(c) {
					c.report("PVE-N03", nil, 0, "the default VM has firewall: false")
				}
				for i, vm := range c.vms() {
					if b, _ := getBool(vm, "firewall"); !b {
						c.report("PVE-N03", P("vms_config", i, "firewall"), 0, "VM %d (%s) has firewall: false (the default)", i, vmName(vm, i))
					}
				}
			}},
		ruleDef{Rule: cr("PVE-N04", "VM firewall disabled", high, axN,
			"the firewall file does not enable the firewall ([OPTIONS] enable defaults to 0)",
			"set enable: 1 in [OPTIONS]"), formats: fw,
			check: func(c *ctx) {
				if l, ok := c.fwOption("enable"); !ok {
					c.reportAt("PVE-N04", Pos{1, 1}, "OPTIONS", 0, "firewall file has no enable: 1 (disabled by default)")
				} else if l.value != "1" {
					c.qmReport("PVE-N04", l, 0, "firewall enable: %s", l.value)
				}
			}},
		ruleDef{Rule: cr("PVE-N05", "VM egress allowed by default", high, axN,
			"policy_out is absent or ACCEPT: the VM chain allows all outbound traffic",
			"set policy_out: DROP and allow only in-range destinations"), formats: fw,
			check: func(c *ctx) {
				if l, ok := c.fwOption("policy_out"); !ok {
					c.reportAt("PVE-N05", Pos{1, 1}, "OPTIONS", 0, "policy_out is not set (defaults to ACCEPT)")
				} else if strings.ToUpper(l.value) == "ACCEPT" {
					c.qmReport("PVE-N05", l, 0, "policy_out: ACCEPT")
				}
			}},
		ruleDef{Rule: cr("PVE-N06", "Spoofing protections off", med, axN,
			"ipfilter off, macfilter: 0 or radv: 1 allow IP/MAC spoofing or rogue router adverts",
			"set ipfilter: 1, keep macfilter: 1, radv: 0"), formats: fw,
			check: func(c *ctx) {
				if l, ok := c.fwOption("ipfilter"); !ok || l.value != "1" {
					c.reportAt("PVE-N06", Pos{max(l.line, 1), 1}, "ipfilter", 0, "ipfilter is not enabled")
				}
				if l, ok := c.fwOption("macfilter"); ok && l.value == "0" {
					c.qmReport("PVE-N06", l, 0, "macfilter: 0 allows MAC spoofing")
				}
				if l, ok := c.fwOption("radv"); ok && l.value == "1" {
					c.qmReport("PVE-N06", l, 0, "radv: 1 allows router advertisements from the VM")
				}
			}},
		ruleDef{Rule: cr("PVE-N07", "SNAT internet egress", high, axN,
			"the SDN gives the VMs SNAT internet egress (sdn_config \"auto\" or snat: true)",
			"use an explicit sdn_config whose subnets have snat: false"), formats: pve,
			check: func(c *ctx) {
				sdn, set := c.doc.model["sdn_config"]
				if !set {
					c.report("PVE-N07", nil, 0, `sdn_config defaults to "auto", which uses SNAT: VMs reach the internet`)
					return
				}
				if s, ok := sdn.(string); ok && s == "auto" {
					c.report("PVE-N07", P("sdn_config"), 0, `sdn_config "auto" uses SNAT: VMs reach the internet`)
				}
				for i, vn := range getList(sdn, "vnet_configs") {
					for j, sub := range getList(vn, "subnets") {
						if b, _ := getBool(sub, "snat"); b {
							c.report("PVE-N07", P("sdn_config", "vnet_configs", i, "subnets", j, "snat"), 0, "subnet %s has snat: true (internet egress)", getString(sub, "cidr"))
						}
					}
				}
			}},
		ruleDef{Rule: cr("PVE-N08", "Per-zone dnsmasq recurses upstream", med, axN,
			"use_pve_ipam_dnsnmasq runs a dnsmasq that recurses upstream (a DNS tunnel) unless the egress lockdown blanks its resolver",
			"enable the inspect-proxmox egress lockdown on the node, or set use_pve_ipam_dnsnmasq: false"), formats: pve,
			check: func(c *ctx) {
				sdn, ok := c.doc.model["sdn_config"].(map[string]any)
				if !ok {
					return
				}
				if b, set := getBool(sdn, "use_pve_ipam_dnsnmasq"); !set || b {
					c.report("PVE-N08", P("sdn_config", "use_pve_ipam_dnsnmasq"), 0, "use_pve_ipam_dnsnmasq is on (the default): confirm the egress lockdown blanks dnsmasq's upstream")
				}
			}},
		ruleDef{Rule: cr("PVE-N09", "Dual-homed VM or template NICs kept", high, axN,
			"a VM bridges different vnets, or keeps its template's NICs (nics unset on a template source)",
			"give each VM one NIC on one vnet, and set nics explicitly for template sources"), formats: both,
			check: func(c *ctx) {
				if c.doc.format == FormatQM {
					bridges, first := map[string]bool{}, qmLine{}
					c.qmLines(func(l qmLine) {
						if b := qmOptions(l.value)["bridge"]; qmNetIndexRE.MatchString(l.key) && b != "" {
							if len(bridges) == 1 && !bridges[b] {
								first = l
							}
							bridges[b] = true
						}
					})
					if len(bridges) > 1 {
						c.qmReport("PVE-N09", first, 0, "VM is attached to %d different bridges", len(bridges))
					}
					return
				}
				for i, vm := range c.vms() {
					vmm, _ := vm.(map[string]any)
					_, set := vmm["nics"]
					if getString(vm, "vm_source_config", "existing_vm_template_tag") != "" && (!set || get(vm, "nics") == nil) {
						c.report("PVE-N09", P("vms_config", i), 0, "VM %d (%s) keeps its template's NICs (nics unset)", i, vmName(vm, i))
					}
					aliases := map[string]bool{}
					for _, n := range getList(vm, "nics") {
						aliases[getString(n, "vnet_alias")] = true
					}
					if len(aliases) > 1 {
						c.report("PVE-N09", P("vms_config", i, "nics"), 0, "VM %d (%s) is attached to %d vnets", i, vmName(vm, i), len(aliases))
					}
				}
			}},
		ruleDef{Rule: cr("PVE-N11", "Pre-existing shared vnets", high, axN,
			"sdn_config: null attaches VMs to pre-existing vnets that other samples may share",
			"give every sample its own SDN (an explicit sdn_config)"), formats: pve,
			check: func(c *ctx) {
				if v, set := c.doc.model["sdn_config"]; set && v == nil {
					c.report("PVE-N11", P("sdn_config"), 0, "")
				}
			}},
		ruleDef{Rule: cr("PVE-H01", "PCI passthrough", high, axH,
			"hostpci passes real hardware (DMA) to the guest",
			"remove the hostpci device"), formats: qm,
			check: qmKeyRule("PVE-H01", hostpciRE, "%s passes a host PCI device to the guest")},
		ruleDef{Rule: cr("PVE-H02", "USB passthrough", high, axH,
			"usb passes a host USB device to the guest",
			"remove the usb device"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if !usbRE.MatchString(l.key) {
						return
					}
					if strings.Contains(l.value, "host=") {
						c.qmReport("PVE-H02", l, int(high), "%s passes host USB device %s", l.key, qmOptions(l.value)["host"])
					} else if strings.Contains(l.value, "spice") {
						c.qmReport("PVE-H02", l, int(med), "%s is a SPICE USB redirect", l.key)
					}
				})
			}},
		ruleDef{Rule: cr("PVE-H03", "Host serial/parallel device", high, axH,
			"serial/parallel maps a host device into the guest (direct host hardware access)",
			"use serial0: socket"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if (serialRE.MatchString(l.key) && strings.HasPrefix(l.value, "/dev/")) || parallelRE.MatchString(l.key) {
						c.qmReport("PVE-H03", l, 0, "%s maps host device %s", l.key, l.value)
					}
				})
			}},
		ruleDef{Rule: cr("PVE-H04", "Raw kvm arguments", crit, axH,
			"args: passes arbitrary arguments to kvm, bypassing every key-level rule (NAT netdevs, host shares, monitor sockets)",
			"remove args: and express the need with supported keys"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if l.key != "args" {
						return
					}
					var flagged []string
					for _, opt := range []string{"-netdev", "-virtfs", "-fsdev", "-chardev", "-monitor", "-qmp", "-device", "-drive"} {
						if strings.Contains(l.value, opt) {
							flagged = append(flagged, opt)
						}
					}
					detail := "args: passes raw options to kvm"
					if len(flagged) > 0 {
						detail += " (" + strings.Join(flagged, " ") + ")"
					}
					c.qmReport("PVE-H04", l, 0, "%s", detail)
				})
			}},
		ruleDef{Rule: cr("PVE-H05", "Host memory or filesystem shared", high, axH,
			"virtiofs, ivshmem or SPICE folder sharing shares host files or memory with the guest",
			"remove the share"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					switch {
					case virtiofsRE.MatchString(l.key):
						c.qmReport("PVE-H05", l, 0, "%s shares a host directory via virtiofs", l.key)
					case l.key == "ivshmem":
						c.qmReport("PVE-H05", l, 0, "ivshmem shares host memory")
					case l.key == "spice_enhancements" && strings.Contains(l.value, "foldersharing=1"):
						c.qmReport("PVE-H05", l, 0, "SPICE folder sharing is on")
					}
				})
			}},
		ruleDef{Rule: cr("PVE-H06", "Hook script", info, axH,
			"a hookscript runs on the host at VM lifecycle events; review what guest data it consumes",
			"review the hook script"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if l.key == "hookscript" {
						c.qmReport("PVE-H06", l, 0, "hookscript %s runs on the host", l.value)
					}
				})
			}},
		ruleDef{Rule: cr("PVE-H07", "QEMU guest agent channel", info, axT,
			"the guest agent is a host-to-guest exec/file channel controlled by guest root: never trust its output for scoring",
			"score from outside the guest"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if l.key == "agent" && (qmOptions(l.value)[""] == "1" || qmOptions(l.value)["enabled"] == "1") {
						c.qmReport("PVE-H07", l, 0, "")
					}
				})
			}},
		ruleDef{Rule: cr("PVE-H08", "Host CPU model exposed", low, axH,
			"cpu: host exposes host CPU flags (incl. vmx/svm for nested virtualisation)",
			"use a named CPU model such as x86-64-v2-AES"), formats: both,
			check: func(c *ctx) {
				if c.doc.format == FormatQM {
					c.qmLines(func(l qmLine) {
						if l.key == "cpu" && strings.HasPrefix(l.value, "host") {
							c.qmReport("PVE-H08", l, 0, "cpu: host")
						}
					})
					return
				}
				if vmDefaultList(c) {
					c.report("PVE-H08", nil, 0, `the default VM uses cpu "host"`)
				}
				for i, vm := range c.vms() {
					if cpu := getString(vm, "cpu"); cpu == "" || cpu == "host" {
						c.report("PVE-H08", P("vms_config", i), 0, "VM %d (%s) uses cpu \"host\" (the default)", i, vmName(vm, i))
					}
				}
			}},
		ruleDef{Rule: cr("PVE-H09", "No resource bounds", low, axH,
			"no cpulimit or memory bound: the VM can starve co-tenants",
			"set memory and cpulimit"), formats: qm,
			check: func(c *ctx) {
				have := map[string]qmLine{}
				c.qmLines(func(l qmLine) { have[l.key] = l })
				if _, ok := have["memory"]; !ok {
					c.reportAt("PVE-H09", Pos{1, 1}, "memory", 0, "no memory: set")
				}
				if _, ok := have["cpulimit"]; !ok {
					c.reportAt("PVE-H09", Pos{1, 1}, "cpulimit", 0, "no cpulimit: set")
				}
			}},
		ruleDef{Rule: cr("PVE-T01", "Cloud-init credentials", med, axT,
			"cloud-init credentials (cipassword, cicustom) are readable inside the guest",
			"use per-sample SSH keys and no password; never reuse credentials"), formats: qm,
			check: func(c *ctx) {
				c.qmLines(func(l qmLine) {
					if l.key == "cipassword" || l.key == "cicustom" {
						c.qmReport("PVE-T01", l, 0, "%s is set (its value is not shown)", l.key)
					}
				})
			}},
	)
}

func qmKeyRule(id string, re *regexp.Regexp, detail string) func(*ctx) {
	return func(c *ctx) {
		c.qmLines(func(l qmLine) {
			if re.MatchString(l.key) {
				c.qmReport(id, l, 0, detail, l.key)
			}
		})
	}
}

func vmName(vm any, i int) string {
	if n := getString(vm, "name"); n != "" {
		return n
	}
	if i == 0 {
		return "default"
	}
	return "unnamed"
}

package proxmox

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Rule IDs are those of the one catalogue (spec/catalog, hardening.md §3 PVE-*) the spec linter
// uses; an ID outside it is a typo that panics in tests.
func finding(id string, sev catalog.Severity, axis catalog.Axis, member, msg, evidence string) backends.Finding {
	catalog.MustLookup(id)
	return backends.Finding{RuleID: id, Severity: sev, Axis: axis, Member: member, Message: msg, Evidence: evidence}
}

// posture derives PVE-* findings from one VM's raw config (go-proxmox has no typed field for
// virtiofs, ivshmem or spice_enhancements), its firewall options and the SDN it joins.
func posture(r vmRef, fw map[string]any, fwUnknown bool, sdn *sdnView) []backends.Finding {
	conf := r.conf
	who := r.name
	if who == "" {
		who = fmt.Sprintf("VM %d", r.vmid)
	}
	var out []backends.Finding
	add := func(id string, sev catalog.Severity, axis catalog.Axis, msg, ev string) {
		out = append(out, finding(id, sev, axis, who, msg, ev))
	}
	const (
		N = catalog.AxisNetwork
		H = catalog.AxisHost
		T = catalog.AxisTooling
	)
	ns := nics(conf)
	networks := map[string]bool{} // bridges and vnets the VM is attached to
	dnsmasqSeen := map[string]bool{}
	for _, n := range ns {
		ev := n.key + ": " + str(conf[n.key])
		if n.opts["link_down"] == "1" {
			continue // a disconnected NIC reaches nothing
		}
		if n.bridge != "" {
			networks[n.bridge] = true
		}
		switch vn, isVnet := sdn.vnets[n.bridge]; {
		case n.bridge == "":
			add("PVE-N01", catalog.SeverityHigh, N, n.key+" has no bridge: QEMU user-mode NAT gives outbound access through the host's network stack", ev)
		case !isVnet:
			add("PVE-N02", catalog.SeverityCritical, N, n.key+" is on host bridge "+n.bridge+" (not an isolated SDN vnet): the guest sits on the host's LAN", ev)
		default:
			zone := str(vn["zone"])
			if z := sdn.zones[zone]; z != nil && str(z["dhcp"]) == "dnsmasq" && !dnsmasqSeen[zone] {
				dnsmasqSeen[zone] = true
				add("PVE-N08", catalog.SeverityMedium, N, "zone "+zone+" runs PVE's dnsmasq, which recurses upstream (a DNS tunnel) unless the host's egress lockdown blanks its resolver; the API cannot show that", "zone "+zone+": dhcp=dnsmasq")
			}
			for _, sub := range sdn.subnets[n.bridge] {
				if truthyAny(sub["snat"]) {
					add("PVE-N07", catalog.SeverityHigh, N, "subnet "+str(sub["cidr"])+" of vnet "+n.bridge+" has SNAT: internet egress", "subnet "+str(sub["subnet"])+": snat=1")
				}
			}
		}
		if !n.firewall {
			add("PVE-N03", catalog.SeverityHigh, N, n.key+" has firewall off: PVE firewall rules do not apply to this NIC", ev)
		}
	}
	if len(networks) > 1 {
		add("PVE-N09", catalog.SeverityHigh, N, "VM is attached to several networks (dual-homed pivot)", strings.Join(sortedSet(networks), ", "))
	}
	if len(ns) > 0 && !fwUnknown {
		if !truthyAny(fw["enable"]) {
			add("PVE-N04", catalog.SeverityHigh, N, "VM firewall is disabled (options enable=0, the default): per-NIC firewall flags do nothing", "firewall/options enable="+orDefault(fw["enable"], "0 (default)"))
		}
		if p := strings.ToUpper(str(fw["policy_out"])); p == "" || p == "ACCEPT" {
			add("PVE-N05", catalog.SeverityHigh, N, "VM firewall policy_out is ACCEPT: no egress allowlist", "firewall/options policy_out="+orDefault(fw["policy_out"], "ACCEPT (default)"))
		}
		if !truthyAny(fw["ipfilter"]) || str(fw["macfilter"]) == "0" || truthyAny(fw["radv"]) {
			add("PVE-N06", catalog.SeverityMedium, N, "VM firewall allows IP/MAC spoofing or router advertisements (ipfilter off, macfilter 0 or radv 1)",
				fmt.Sprintf("ipfilter=%s macfilter=%s radv=%s", orDefault(fw["ipfilter"], "0"), orDefault(fw["macfilter"], "1"), orDefault(fw["radv"], "0")))
		}
	}
	for _, k := range sortedKeys(conf) {
		v := str(conf[k])
		ev := k + ": " + v
		switch {
		case strings.HasPrefix(k, "hostpci"):
			add("PVE-H01", catalog.SeverityHigh, H, "PCI passthrough gives the guest real hardware (DMA)", ev)
		case strings.HasPrefix(k, "usb") && isIndexed(k, "usb"):
			if strings.Contains(v, "host=spice") {
				add("PVE-H02", catalog.SeverityMedium, H, "USB redirection over SPICE", ev)
			} else {
				add("PVE-H02", catalog.SeverityHigh, H, "host USB device passed through to the guest", ev)
			}
		case (strings.HasPrefix(k, "serial") && isIndexed(k, "serial") && strings.HasPrefix(v, "/dev/")) ||
			(strings.HasPrefix(k, "parallel") && isIndexed(k, "parallel")):
			add("PVE-H03", catalog.SeverityHigh, H, "host character device passed to the guest", ev)
		case k == "args":
			add("PVE-H04", catalog.SeverityCritical, H, "raw QEMU arguments bypass every other check"+argsDetail(v), ev)
		case strings.HasPrefix(k, "virtiofs") && isIndexed(k, "virtiofs"):
			add("PVE-H05", catalog.SeverityHigh, H, "host directory shared into the guest (virtiofs)", ev)
		case k == "ivshmem":
			add("PVE-H05", catalog.SeverityHigh, H, "shared memory with the host and other VMs (ivshmem)", ev)
		case k == "spice_enhancements" && strings.Contains(v, "foldersharing=1"):
			add("PVE-H05", catalog.SeverityHigh, H, "SPICE folder sharing", ev)
		case k == "hookscript":
			add("PVE-H06", catalog.SeverityInfo, H, "host-side hookscript runs at VM lifecycle events: review it", ev)
		case k == "agent" && agentEnabled(v):
			add("PVE-H07", catalog.SeverityInfo, T, "QEMU guest agent channel: its replies are guest-controlled, never trust them for scoring", ev)
		case k == "cpu" && (v == "host" || strings.HasPrefix(v, "host,") || strings.Contains(v, "cputype=host")):
			add("PVE-H08", catalog.SeverityLow, H, "cpu: host exposes host CPU flags (nested virtualisation)", ev)
		case k == "cipassword" || k == "sshkeys" || k == "ciuser" || k == "cicustom":
			add("PVE-T01", catalog.SeverityMedium, T, "cloud-init credentials are readable inside the guest", k+": (set)")
		}
	}
	return out
}

// argsDetail names the dangerous QEMU options found in args.
func argsDetail(v string) string {
	var hits []string
	for _, o := range []string{"-netdev user", "-virtfs", "-fsdev", "-chardev", "-monitor", "-qmp", "-device"} {
		if strings.Contains(v, o) {
			hits = append(hits, o)
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return " (" + strings.Join(hits, ", ") + ")"
}

func isIndexed(k, prefix string) bool {
	rest := strings.TrimPrefix(k, prefix)
	if rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// agentEnabled parses the agent property string ("1", "enabled=1,fstrim_cloned_disks=1").
func agentEnabled(v string) bool {
	for _, kv := range strings.Split(v, ",") {
		key, val, ok := strings.Cut(kv, "=")
		if !ok && key == "1" {
			return true
		}
		if ok && key == "enabled" {
			return val == "1"
		}
	}
	return false
}

func truthyAny(x any) bool {
	switch v := x.(type) {
	case float64:
		return v != 0
	case bool:
		return v
	case string:
		return v == "1"
	}
	return false
}

func orDefault(x any, def string) string {
	if x == nil {
		return def
	}
	return str(x)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedSet(m map[string]bool) []string { return keys(m) }

// sortFindings orders findings most severe first, then by rule and member.
func sortFindings(fs []backends.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Severity != fs[j].Severity {
			return fs[i].Severity > fs[j].Severity
		}
		if fs[i].RuleID != fs[j].RuleID {
			return fs[i].RuleID < fs[j].RuleID
		}
		return fs[i].Member < fs[j].Member
	})
}

package proxmox

import (
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// The demo's weak and hardened samples, through the whole discovery path.
func TestPostureWeakVersusHardenedSample(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	sbs, err := b.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	weak := findSandbox(t, sbs, "pve:lab/cyb001z")
	hard := findSandbox(t, sbs, "pve:lab/cyb002z")
	for _, tc := range []struct {
		sb     backends.Sandbox
		member string
		want   string
	}{
		// default: vnet with SNAT + vmbr0 uplink, NIC firewalls off, VM firewall off, cpu host.
		{weak, "default", "PVE-H07 PVE-H08 PVE-N02 PVE-N03 PVE-N04 PVE-N05 PVE-N06 PVE-N07 PVE-N08 PVE-N09"},
		// victim: raw args with -netdev user.
		{weak, "victim", "PVE-H04 PVE-H07 PVE-H08 PVE-N03 PVE-N04 PVE-N05 PVE-N06 PVE-N07 PVE-N08"},
		// hardened: isolated vnet without SNAT, firewall on at VM and NIC, policy_out DROP, ipfilter.
		{hard, "default", "PVE-H07"},
		{hard, "target", ""},
	} {
		if got := strings.Join(ruleIDs(tc.sb.Findings, tc.member), " "); got != tc.want {
			t.Errorf("%s/%s findings = %q, want %q", tc.sb.Name, tc.member, got, tc.want)
		}
	}
	if weak.WorstSeverity() != catalog.SeverityCritical || hard.WorstSeverity() != catalog.SeverityInfo {
		t.Errorf("worst severity weak=%v hardened=%v", weak.WorstSeverity(), hard.WorstSeverity())
	}
	if weak.Findings[0].Severity != catalog.SeverityCritical {
		t.Errorf("findings not sorted most severe first: %+v", weak.Findings[0])
	}
}

// Each config key rule on its own, from raw configs.
func TestPostureRulesFromRawConfig(t *testing.T) {
	sdn := &sdnView{vnets: map[string]map[string]any{"iso0": {"vnet": "iso0", "zone": "abc123z"}}, subnets: map[string][]map[string]any{}}
	hardFW := map[string]any{"enable": float64(1), "policy_out": "DROP", "ipfilter": float64(1)}
	safeNIC := "virtio=BC:24:11:00:00:01,bridge=iso0,firewall=1"
	for _, tc := range []struct {
		name string
		conf map[string]any
		fw   map[string]any
		want string
		sev  catalog.Severity
		axis catalog.Axis
	}{
		{"no bridge is user-mode NAT", map[string]any{"net0": "virtio=BC:24:11:00:00:01,firewall=1"}, hardFW, "PVE-N01", catalog.SeverityHigh, catalog.AxisNetwork},
		{"host bridge", map[string]any{"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr1,firewall=1"}, hardFW, "PVE-N02", catalog.SeverityCritical, catalog.AxisNetwork},
		{"nic firewall off", map[string]any{"net0": "virtio=BC:24:11:00:00:01,bridge=iso0"}, hardFW, "PVE-N03", catalog.SeverityHigh, catalog.AxisNetwork},
		{"vm firewall off", map[string]any{"net0": safeNIC}, map[string]any{"policy_out": "DROP", "ipfilter": float64(1)}, "PVE-N04", catalog.SeverityHigh, catalog.AxisNetwork},
		{"policy_out accept", map[string]any{"net0": safeNIC}, map[string]any{"enable": float64(1), "policy_out": "ACCEPT", "ipfilter": float64(1)}, "PVE-N05", catalog.SeverityHigh, catalog.AxisNetwork},
		{"macfilter off", map[string]any{"net0": safeNIC}, map[string]any{"enable": float64(1), "policy_out": "DROP", "ipfilter": float64(1), "macfilter": float64(0)}, "PVE-N06", catalog.SeverityMedium, catalog.AxisNetwork},
		{"pci passthrough", map[string]any{"hostpci0": "0000:01:00.0,pcie=1"}, hardFW, "PVE-H01", catalog.SeverityHigh, catalog.AxisHost},
		{"usb host", map[string]any{"usb0": "host=1234:5678"}, hardFW, "PVE-H02", catalog.SeverityHigh, catalog.AxisHost},
		{"usb spice", map[string]any{"usb0": "host=spice"}, hardFW, "PVE-H02", catalog.SeverityMedium, catalog.AxisHost},
		{"serial host device", map[string]any{"serial0": "/dev/ttyS0"}, hardFW, "PVE-H03", catalog.SeverityHigh, catalog.AxisHost},
		{"raw args", map[string]any{"args": "-virtfs local,path=/,mount_tag=h"}, hardFW, "PVE-H04", catalog.SeverityCritical, catalog.AxisHost},
		{"virtiofs", map[string]any{"virtiofs0": "dirid=share"}, hardFW, "PVE-H05", catalog.SeverityHigh, catalog.AxisHost},
		{"ivshmem", map[string]any{"ivshmem": "size=32"}, hardFW, "PVE-H05", catalog.SeverityHigh, catalog.AxisHost},
		{"spice folder sharing", map[string]any{"spice_enhancements": "foldersharing=1"}, hardFW, "PVE-H05", catalog.SeverityHigh, catalog.AxisHost},
		{"hookscript", map[string]any{"hookscript": "local:snippets/x.pl"}, hardFW, "PVE-H06", catalog.SeverityInfo, catalog.AxisHost},
		{"guest agent", map[string]any{"agent": "enabled=1,fstrim_cloned_disks=1"}, hardFW, "PVE-H07", catalog.SeverityInfo, catalog.AxisTooling},
		{"cpu host", map[string]any{"cpu": "host"}, hardFW, "PVE-H08", catalog.SeverityLow, catalog.AxisHost},
		{"cloud-init password", map[string]any{"cipassword": "**********"}, hardFW, "PVE-T01", catalog.SeverityMedium, catalog.AxisTooling},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := posture(vmRef{vmid: 100, name: "vm", conf: tc.conf}, tc.fw, false, sdn)
			if len(fs) != 1 {
				t.Fatalf("findings = %+v, want exactly %s", fs, tc.want)
			}
			f := fs[0]
			if f.RuleID != tc.want || f.Severity != tc.sev || f.Axis != tc.axis || f.Member != "vm" || f.Message == "" || f.Evidence == "" {
				t.Errorf("finding = %+v, want %s %v %v", f, tc.want, tc.sev, tc.axis)
			}
		})
	}
	// Negative controls: settings that look similar but are safe.
	for name, conf := range map[string]map[string]any{
		"serial socket":     {"serial0": "socket"},
		"agent disabled":    {"agent": "enabled=0"},
		"named cpu":         {"cpu": "x86-64-v2-AES"},
		"link down nic":     {"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,link_down=1"},
		"isolated vnet nic": {"net0": safeNIC},
	} {
		if fs := posture(vmRef{vmid: 100, name: "vm", conf: conf}, hardFW, false, sdn); len(fs) != 0 {
			t.Errorf("%s: unexpected findings %+v", name, fs)
		}
	}
}

package proxmox

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// nic is one parsed netN property string.
type nic struct {
	key, model, mac, bridge string
	firewall                bool
	opts                    map[string]string
}

// nics parses every netN key: "virtio=BC:24:11:..,bridge=vmbr0,firewall=1".
func nics(conf map[string]any) []nic {
	var out []nic
	for k, v := range conf {
		if !strings.HasPrefix(k, "net") {
			continue
		}
		if _, err := strconv.Atoi(k[3:]); err != nil {
			continue
		}
		n := nic{key: k, opts: map[string]string{}}
		for i, part := range strings.Split(str(v), ",") {
			key, val, _ := strings.Cut(part, "=")
			if i == 0 {
				n.model, n.mac = key, val
				continue
			}
			n.opts[key] = val
		}
		n.bridge = n.opts["bridge"]
		n.firewall = n.opts["firewall"] == "1"
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

func tagList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
}

func hasTag(s, tag string) bool {
	for _, t := range tagList(s) {
		if strings.EqualFold(t, tag) {
			return true
		}
	}
	return false
}

// group turns VMs into sandboxes: Inspect VMs by their sample zone, everything else one each.
func (b *Backend) group(refs []vmRef, sdn *sdnView) *fleet {
	type grp struct {
		id, zone string
		vms      []vmRef
	}
	groups := map[string]*grp{}
	var order []string
	for _, r := range refs {
		key := fmt.Sprintf("vm-%d", r.vmid)
		zone := ""
		if hasTag(str(r.conf["tags"]), "inspect") || hasTag(r.res.Tags, "inspect") {
			if z := sampleZone(r.conf, sdn); z != "" {
				key, zone = z, z
			}
		}
		g, ok := groups[key]
		if !ok {
			g = &grp{id: key, zone: zone}
			groups[key] = g
			order = append(order, key)
		}
		g.vms = append(g.vms, r)
	}
	sort.Strings(order)
	zoneVnets := map[string][]string{}
	for name, vn := range sdn.vnets {
		z := str(vn["zone"])
		zoneVnets[z] = append(zoneVnets[z], name)
	}
	f := &fleet{refs: map[string][]vmRef{}}
	b.mu.Lock()
	simulated := b.simulated
	b.mu.Unlock()
	for _, key := range order {
		g := groups[key]
		sb := b.sandbox(g.id, g.zone, g.vms, sdn, zoneVnets[g.zone])
		sb.Simulated = simulated
		f.sandboxes = append(f.sandboxes, sb)
		f.refs[sb.ID] = g.vms
	}
	return f
}

// sampleZone is the first Inspect sample zone any of the VM's NICs attaches to.
func sampleZone(conf map[string]any, sdn *sdnView) string {
	for _, n := range nics(conf) {
		if vn, ok := sdn.vnets[n.bridge]; ok {
			if z := str(vn["zone"]); zoneRE.MatchString(z) {
				return z
			}
		}
	}
	return ""
}

func (b *Backend) sandbox(key, zone string, vms []vmRef, sdn *sdnView, vnets []string) backends.Sandbox {
	sb := backends.Sandbox{
		ID:       b.Name() + "/" + key,
		Name:     key,
		Backend:  backends.KindProxmox,
		Endpoint: b.Name(),
		Labels:   map[string]string{},
	}
	pools, tags, nodes := map[string]bool{}, map[string]bool{}, map[string]bool{}
	inspect := false
	for _, r := range vms {
		t := str(r.conf["tags"])
		if t == "" {
			t = r.res.Tags
		}
		for _, tag := range tagList(t) {
			tags[tag] = true
		}
		if hasTag(t, "inspect") && r.res.Template == 0 {
			inspect = true
		}
		if r.res.Pool != "" {
			pools[r.res.Pool] = true
		}
		nodes[r.node] = true
		m := member(r)
		if sb.Created.IsZero() || (!m.Created.IsZero() && m.Created.Before(sb.Created)) {
			sb.Created = m.Created
		}
		sb.Members = append(sb.Members, m)
		b.mu.Lock()
		c := b.configs[r.vmid]
		b.mu.Unlock()
		sb.Findings = append(sb.Findings, posture(r, c.fw, c.fwErr, sdn)...)
	}
	if len(vms) == 1 && zone == "" && vms[0].name != "" {
		sb.Name = vms[0].name
	}
	sb.Inspect = inspect
	sb.Actionable = inspect
	sb.Status = backends.DeriveStatus(sb.Members)
	if zone != "" {
		m := zoneRE.FindStringSubmatch(zone)
		sb.Task = m[1] // Inspect keeps only the first three characters of the task name
		sb.Sample = zone
		sb.Extra = append(sb.Extra, backends.KeyValue{Key: "zone", Value: zone},
			backends.KeyValue{Key: "task prefix", Value: m[1]})
		sb.Labels["pve.zone"] = zone
		vnets = append([]string(nil), vnets...)
		sort.Strings(vnets)
		sb.Extra = append(sb.Extra, backends.KeyValue{Key: "vnets", Value: strings.Join(vnets, ",")})
	}
	add := func(k string, set map[string]bool) {
		if len(set) > 0 {
			v := strings.Join(keys(set), ",")
			sb.Extra = append(sb.Extra, backends.KeyValue{Key: k, Value: v})
			sb.Labels["pve."+k] = v
		}
	}
	add("node", nodes)
	add("pool", pools)
	add("tags", tags)
	if b.rootInsecure {
		sb.Findings = append(sb.Findings, finding("PVE-T02", catalog.SeverityMedium, catalog.AxisTooling, "",
			"this Proxmox endpoint is used with the root@pam password and TLS verification off: an agent that reaches the API gets the whole host", "user=root@pam insecure_skip_verify=true"))
	}
	sortFindings(sb.Findings)
	return sb
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func member(r vmRef) backends.Member {
	state := r.res.Status
	if l := r.res.Lock; l != "" {
		state += " (lock: " + l + ")"
	}
	m := backends.Member{
		ID:      strconv.Itoa(r.vmid),
		Name:    r.name,
		Service: r.name,
		State:   state,
		Running: r.res.Status == "running",
		Labels:  map[string]string{"node": r.node, "vmid": strconv.Itoa(r.vmid)},
	}
	if m.Name == "" {
		m.Name = fmt.Sprintf("VM %d", r.vmid)
	}
	if t := str(r.conf["tags"]); t != "" {
		m.Labels["tags"] = t
	}
	if r.res.Lock != "" {
		m.Labels["lock"] = r.res.Lock
	}
	if r.res.Template == 1 {
		m.Labels["template"] = "1"
	}
	// meta: creation-qemu=9.0.2,ctime=1727000000
	for _, kv := range strings.Split(str(r.conf["meta"]), ",") {
		if v, ok := strings.CutPrefix(kv, "ctime="); ok {
			if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
				m.Created = time.Unix(sec, 0).UTC()
			}
		}
	}
	return m
}

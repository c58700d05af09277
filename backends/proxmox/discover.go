package proxmox

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

// zoneRE is Inspect's per-sample SDN zone id: <task prefix (1-3)><3 digits>z.
var zoneRE = regexp.MustCompile(`^([a-z0-9]{1,3})([0-9]{3})z$`)

// cachedVM is a VM's raw config and firewall options, refetched after cacheTTL or an action.
type cachedVM struct {
	conf    map[string]any
	fw      map[string]any
	fwErr   bool
	fetched time.Time
}

// sdnView is the SDN vnets and subnets by vnet, refetched after cacheTTL or when a NIC names
// an unknown bridge.
type sdnView struct {
	vnets   map[string]map[string]any   // vnet -> vnet object (zone, alias, ...)
	subnets map[string][]map[string]any // vnet -> subnets
	zones   map[string]map[string]any
	fetched time.Time
}

// resource is one /cluster/resources entry. It mirrors go-proxmox's ClusterResource, which has no
// lock field; template stays a number (PVE sends 0/1).
type resource struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	VMID     uint64 `json:"vmid"`
	Node     string `json:"node"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Template uint64 `json:"template"`
	Tags     string `json:"tags"`
	Pool     string `json:"pool"`
	Lock     string `json:"lock"`
	HAState  string `json:"hastate"`
}

// vmRef locates one VM of a sandbox for actions.
type vmRef struct {
	node string
	vmid int
	name string
	res  *resource
	conf map[string]any
}

func (r vmRef) path() string { return fmt.Sprintf("/nodes/%s/qemu/%d", r.node, r.vmid) }

// fleet is one discovery result.
type fleet struct {
	sandboxes []backends.Sandbox
	refs      map[string][]vmRef // sandbox ID -> VMs
}

// Watch lists, emits one EventReset, then polls /cluster/resources every interval (backing off
// while the API is slow) and emits upserts and removals. It returns the error that ended it.
func (b *Backend) Watch(ctx context.Context, emit func(backends.Event)) error {
	f, err := b.discover(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	emit(backends.Event{Type: backends.EventReset, Sandboxes: f.sandboxes})
	prev, last := index(f.sandboxes), f
	interval, failures := b.interval, 0
	tasks := newTaskWatch(time.Now()) // VM tasks as Activity
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		start := time.Now()
		f, err := b.discover(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			failures++
			if failures >= 3 { // unreachable: let the supervisor reconnect and re-list
				return fmt.Errorf("%s: %w", b.Name(), err)
			}
			timer.Reset(interval)
			continue
		}
		failures = 0
		tasks.poll(ctx, b, f.sandboxes, emit)
		if f == last { // nothing changed since the previous refresh
			timer.Reset(b.nextInterval(&interval, start))
			continue
		}
		last = f
		next := index(f.sandboxes)
		for _, sb := range f.sandboxes {
			if old, ok := prev[sb.ID]; !ok || !reflect.DeepEqual(old, sb) {
				emit(backends.Event{Type: backends.EventUpsert, Sandbox: sb})
			}
		}
		for _, id := range sortedIDs(prev) {
			if _, ok := next[id]; !ok {
				emit(backends.Event{Type: backends.EventRemove, ID: id})
			}
		}
		prev = next
		timer.Reset(b.nextInterval(&interval, start))
	}
}

// nextInterval backs off while a refresh takes more than half the interval and recovers when
// refreshes are fast again.
func (b *Backend) nextInterval(interval *time.Duration, start time.Time) time.Duration {
	if took := time.Since(start); took > *interval/2 {
		*interval = min(*interval*2, b.maxInterval)
	} else if *interval > b.interval {
		*interval = max(*interval/2, b.interval)
	}
	return *interval
}

func index(sbs []backends.Sandbox) map[string]backends.Sandbox {
	m := make(map[string]backends.Sandbox, len(sbs))
	for _, s := range sbs {
		m[s.ID] = s
	}
	return m
}

func sortedIDs(m map[string]backends.Sandbox) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// List returns the current sandboxes (one discovery pass).
func (b *Backend) List(ctx context.Context) ([]backends.Sandbox, error) {
	f, err := b.discover(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return f.sandboxes, nil
}

// discover is one refresh: a /cluster/resources call, plus configs and SDN only for VMs not in
// the cache (or stale). When the resource list, every config and the SDN view are what the
// previous refresh saw, it returns the previous fleet itself.
func (b *Backend) discover(ctx context.Context) (*fleet, error) {
	b.probeVersion(ctx)
	var rs []*resource
	if err := b.get(ctx, "/cluster/resources?type=vm", &rs); err != nil {
		return nil, fmt.Errorf("list VMs: %s", apiMessage(err))
	}
	var vms []*resource
	live := map[int]bool{}
	for _, r := range rs {
		if r.Type != "qemu" {
			continue
		}
		live[int(r.VMID)] = true
		if r.Template == 1 && !b.showTemplates {
			continue
		}
		vms = append(vms, r)
	}
	sort.Slice(vms, func(i, j int) bool { return vms[i].VMID < vms[j].VMID })
	now := time.Now()
	refs := make([]vmRef, 0, len(vms))
	needSDN, changed := false, false
	for _, r := range vms {
		c, fresh, err := b.vmConfig(ctx, r, now)
		changed = changed || fresh
		if err != nil {
			if pve.IsNotFound(err) { // deleted between the list and the config read
				continue
			}
			return nil, fmt.Errorf("VM %d config: %s", r.VMID, apiMessage(err))
		}
		refs = append(refs, vmRef{node: r.Node, vmid: int(r.VMID), name: r.Name, res: r, conf: c.conf})
		if !fresh {
			continue // its bridges were looked up when this config was read
		}
		for _, n := range nics(c.conf) {
			if n.bridge != "" && !b.knownBridge(n.bridge) {
				needSDN = true
			}
		}
	}
	b.forget(live)
	sdn, sdnChanged, err := b.sdnSnapshot(ctx, needSDN, now)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	last, unchanged := b.last, !changed && !sdnChanged && b.last != nil && sameResources(b.lastRes, vms)
	b.mu.Unlock()
	if unchanged {
		return last, nil
	}
	f := b.group(refs, sdn)
	res := make([]resource, len(vms))
	for i, r := range vms {
		res[i] = *r
	}
	b.mu.Lock()
	b.last, b.lastRes = f, res
	b.mu.Unlock()
	return f, nil
}

func sameResources(old []resource, cur []*resource) bool {
	if len(old) != len(cur) {
		return false
	}
	for i, r := range cur {
		if old[i] != *r {
			return false
		}
	}
	return true
}

// probeVersion reads /version once: the simulator announces itself in the version string.
func (b *Backend) probeVersion(ctx context.Context) {
	b.mu.Lock()
	done := b.probed
	b.mu.Unlock()
	if done {
		return
	}
	var v pve.Version
	if err := b.get(ctx, "/version", &v); err == nil {
		b.mu.Lock()
		b.probed, b.simulated = true, strings.HasSuffix(v.Version, pvesim.VersionSuffix)
		b.mu.Unlock()
	}
}

// vmConfig returns a VM's config and firewall options from the cache, refetching them once
// they are older than cacheTTL; changed reports a refetch that found something different.
func (b *Backend) vmConfig(ctx context.Context, r *resource, now time.Time) (c cachedVM, changed bool, err error) {
	id := int(r.VMID)
	b.mu.Lock()
	old, ok := b.configs[id]
	b.mu.Unlock()
	if ok && now.Sub(old.fetched) < b.cacheTTL {
		return old, false, nil
	}
	c = cachedVM{fetched: now}
	base := fmt.Sprintf("/nodes/%s/qemu/%d", r.Node, id)
	if err := b.get(ctx, base+"/config", &c.conf); err != nil {
		return c, false, err
	}
	// go-proxmox's FirewallOptionGet always returns nil (pitfall §1.5.1): read the raw map.
	if err := b.get(ctx, base+"/firewall/options", &c.fw); err != nil {
		c.fwErr = true
	}
	if c.fw == nil {
		c.fw = map[string]any{}
	}
	changed = !ok || c.fwErr != old.fwErr || !reflect.DeepEqual(c.conf, old.conf) || !reflect.DeepEqual(c.fw, old.fw)
	if !changed { // keep the maps the previous fleet was grouped from
		c.conf, c.fw = old.conf, old.fw
	}
	b.mu.Lock()
	b.configs[id] = c
	b.mu.Unlock()
	return c, changed, nil
}

// invalidate drops cached configs after an action changed them.
func (b *Backend) invalidate(ids ...int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		delete(b.configs, id)
	}
	b.sdn, b.last = nil, nil
}

func (b *Backend) forget(live map[int]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.configs {
		if !live[id] {
			delete(b.configs, id)
		}
	}
}

func (b *Backend) knownBridge(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sdn == nil {
		return false
	}
	_, ok := b.sdn.vnets[name]
	return ok || strings.HasPrefix(name, "vmbr") // host bridges are never SDN vnets
}

// sdnSnapshot returns the SDN view, refetched after cacheTTL or when forced; changed reports a
// refetch that found something different.
func (b *Backend) sdnSnapshot(ctx context.Context, force bool, now time.Time) (_ *sdnView, changed bool, err error) {
	b.mu.Lock()
	cur := b.sdn
	b.mu.Unlock()
	if cur != nil && !force && now.Sub(cur.fetched) < b.cacheTTL {
		return cur, false, nil
	}
	v := &sdnView{vnets: map[string]map[string]any{}, subnets: map[string][]map[string]any{}, zones: map[string]map[string]any{}, fetched: now}
	var vnets []map[string]any
	if err := b.get(ctx, "/cluster/sdn/vnets", &vnets); err != nil {
		if !pve.IsNotAuthorized(err) {
			return nil, false, fmt.Errorf("list SDN vnets: %s", apiMessage(err))
		}
		// A token without SDN.Audit still sees VMs; grouping falls back to one sandbox per VM.
	}
	var zones []map[string]any
	if len(vnets) > 0 {
		if err := b.get(ctx, "/cluster/sdn/zones", &zones); err != nil {
			return nil, false, fmt.Errorf("list SDN zones: %s", apiMessage(err))
		}
	}
	for _, z := range zones {
		v.zones[str(z["zone"])] = z
	}
	for _, vn := range vnets {
		name := str(vn["vnet"])
		v.vnets[name] = vn
		if !zoneRE.MatchString(str(vn["zone"])) {
			continue // subnets only matter for sample zones
		}
		var subs []map[string]any
		if err := b.get(ctx, "/cluster/sdn/vnets/"+name+"/subnets", &subs); err != nil {
			return nil, false, fmt.Errorf("list subnets of vnet %s: %s", name, apiMessage(err))
		}
		v.subnets[name] = subs
	}
	changed = cur == nil || !reflect.DeepEqual(cur.vnets, v.vnets) || !reflect.DeepEqual(cur.subnets, v.subnets) || !reflect.DeepEqual(cur.zones, v.zones)
	if !changed { // keep the maps the previous fleet was grouped from, with the new time
		same := *cur
		same.fetched = now
		v = &same
	}
	b.mu.Lock()
	b.sdn = v
	b.mu.Unlock()
	return v, changed, nil
}

func str(x any) string {
	switch v := x.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(x)
}

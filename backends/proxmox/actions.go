package proxmox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/rangekeeper/rangekeeper/backends"
)

// snapNameRE is PVE's pve-configid format used for snapshot names (≤ 40 characters).
var snapNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]+$`)

// ValidateSnapshotName applies PVE's rules for snapshot names before any request is sent.
func ValidateSnapshotName(name string) error {
	switch {
	case len(name) > 40:
		return fmt.Errorf("snapshot name %q: at most 40 characters", name)
	case name == "current" || name == "pending":
		return fmt.Errorf("snapshot name %q is reserved by Proxmox", name)
	case !snapNameRE.MatchString(name):
		return fmt.Errorf("snapshot name %q: must start with a letter and use only letters, digits, '-' and '_' (at least 2 characters)", name)
	}
	return nil
}

// resolve finds a sandbox's VMs with a fresh discovery pass; non-sandboxes are refused unless
// force is set.
func (b *Backend) resolve(ctx context.Context, sandboxID string, force bool) (backends.Sandbox, []vmRef, error) {
	f, err := b.discover(ctx)
	if err != nil {
		return backends.Sandbox{}, nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	for _, sb := range f.sandboxes {
		if sb.ID == sandboxID {
			if !sb.Actionable && !force {
				return sb, nil, fmt.Errorf("%s: %w", sandboxID, backends.ErrNotSandbox)
			}
			return sb, f.refs[sb.ID], nil
		}
	}
	return backends.Sandbox{}, nil, fmt.Errorf("%s: %w", sandboxID, backends.ErrNotFound)
}

func vmLabel(r vmRef) string {
	if r.name != "" {
		return fmt.Sprintf("VM %d (%s)", r.vmid, r.name)
	}
	return fmt.Sprintf("VM %d", r.vmid)
}

// Snapshot snapshots every VM of the sandbox under one name; WithMemory saves RAM (vmstate),
// which go-proxmox's NewSnapshot cannot send, so the endpoint is called directly.
func (b *Backend) Snapshot(ctx context.Context, sandboxID string, opts backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	name := opts.Name
	if name == "" {
		name = "rk-" + time.Now().UTC().Format("20060102-150405")
	}
	if err := ValidateSnapshotName(name); err != nil {
		return backends.SnapshotInfo{}, err
	}
	_, refs, err := b.resolve(ctx, sandboxID, false)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	info := backends.SnapshotInfo{ID: name, SandboxID: sandboxID, Name: name, Created: time.Now().UTC(),
		Details: map[string]string{"vmstate": fmt.Sprint(opts.WithMemory)}}
	for _, r := range refs {
		body := map[string]any{"snapname": name}
		if opts.WithMemory {
			body["vmstate"] = 1
		}
		if opts.Description != "" {
			body["description"] = opts.Description
		}
		if err := b.post(ctx, r.path()+"/snapshot", body, "snapshot "+name+" of "+vmLabel(r)); err != nil {
			if len(info.Members) > 0 {
				return info, fmt.Errorf("%w (already snapshotted: %s)", err, strings.Join(info.Members, ", "))
			}
			return info, err
		}
		info.Members = append(info.Members, r.name)
	}
	b.invalidate(ids(refs)...)
	return info, nil
}

func ids(refs []vmRef) []int {
	out := make([]int, len(refs))
	for i, r := range refs {
		out[i] = r.vmid
	}
	return out
}

// Snapshots lists snapshots by name across the sandbox's VMs (excluding PVE's "current").
func (b *Backend) Snapshots(ctx context.Context, sandboxID string) ([]backends.SnapshotInfo, error) {
	_, refs, err := b.resolve(ctx, sandboxID, true)
	if err != nil {
		return nil, err
	}
	byName := map[string]*backends.SnapshotInfo{}
	for _, r := range refs {
		var snaps []*pve.VirtualMachineSnapshot
		if err := b.get(ctx, r.path()+"/snapshot", &snaps); err != nil {
			return nil, fmt.Errorf("list snapshots of %s: %s", vmLabel(r), apiMessage(err))
		}
		for _, s := range snaps {
			if s.Name == "current" {
				continue
			}
			si, ok := byName[s.Name]
			if !ok {
				si = &backends.SnapshotInfo{ID: s.Name, SandboxID: sandboxID, Name: s.Name, Details: map[string]string{}}
				byName[s.Name] = si
			}
			t := time.Unix(s.Snaptime, 0).UTC()
			if si.Created.IsZero() || t.Before(si.Created) {
				si.Created = t
			}
			si.Members = append(si.Members, r.name)
			if s.Vmstate == 1 {
				si.Details["vmstate"] = "true"
			}
			if s.Parent != "" {
				si.Details["parent"] = s.Parent
			}
			if s.Description != "" {
				si.Details["description"] = s.Description
			}
		}
	}
	out := make([]backends.SnapshotInfo, 0, len(byName))
	for _, si := range byName {
		out = append(out, *si)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// holders returns the VMs that have snapshot name, after checking it exists somewhere.
func (b *Backend) holders(ctx context.Context, refs []vmRef, name string) (have, missing []vmRef, err error) {
	for _, r := range refs {
		var snaps []*pve.VirtualMachineSnapshot
		if err := b.get(ctx, r.path()+"/snapshot", &snaps); err != nil {
			return nil, nil, fmt.Errorf("list snapshots of %s: %s", vmLabel(r), apiMessage(err))
		}
		found := false
		for _, s := range snaps {
			found = found || (s.Name == name && name != "current")
		}
		if found {
			have = append(have, r)
		} else {
			missing = append(missing, r)
		}
	}
	if len(have) == 0 {
		return nil, nil, fmt.Errorf("snapshot %q not found on any VM of the sandbox", name)
	}
	return have, missing, nil
}

// DeleteSnapshot removes the named snapshot from every VM that has it.
func (b *Backend) DeleteSnapshot(ctx context.Context, sandboxID, snapshotID string) error {
	_, refs, err := b.resolve(ctx, sandboxID, false)
	if err != nil {
		return err
	}
	have, _, err := b.holders(ctx, refs, snapshotID)
	if err != nil {
		return err
	}
	for _, r := range have {
		var upid pve.UPID
		what := "delete snapshot " + snapshotID + " of " + vmLabel(r)
		if err := b.client.Delete(ctx, r.path()+"/snapshot/"+snapshotID, &upid); err != nil {
			return fmt.Errorf("%s: %s", what, apiMessage(err))
		}
		if err := b.waitTask(ctx, upid, what); err != nil {
			return err
		}
	}
	b.invalidate(ids(refs)...)
	return nil
}

// Revert rolls every VM back to the snapshot (refusing when a VM lacks it, so a sandbox is
// never half reverted), optionally starting the VMs and waiting for their guest agents.
func (b *Backend) Revert(ctx context.Context, sandboxID, snapshotID string, opts backends.RevertOptions) error {
	_, refs, err := b.resolve(ctx, sandboxID, false)
	if err != nil {
		return err
	}
	have, missing, err := b.holders(ctx, refs, snapshotID)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		var names []string
		for _, r := range missing {
			names = append(names, vmLabel(r))
		}
		return fmt.Errorf("snapshot %q is missing on %s: refusing a partial revert", snapshotID, strings.Join(names, ", "))
	}
	for _, r := range have {
		var body any // go-proxmox's Rollback cannot send start=1
		if opts.Start {
			body = map[string]any{"start": 1}
		}
		if err := b.post(ctx, r.path()+"/snapshot/"+snapshotID+"/rollback", body, "rollback "+vmLabel(r)+" to "+snapshotID); err != nil {
			return err
		}
	}
	b.invalidate(ids(refs)...)
	if !opts.Start {
		return nil
	}
	for _, r := range have {
		if !agentEnabled(str(r.conf["agent"])) {
			continue
		}
		if err := b.waitAgent(ctx, r, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// waitAgent pings the guest agent until it answers.
func (b *Backend) waitAgent(ctx context.Context, r vmRef, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	delay := 50 * time.Millisecond
	var last error
	for {
		if last = b.client.Post(ctx, r.path()+"/agent/ping", nil, nil); last == nil {
			return nil
		}
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("guest agent of %s did not answer within %s: %s", vmLabel(r), limit, apiMessage(last))
		}
		delay = min(delay*2, time.Second)
	}
}

// Teardown stops and destroys every VM (purge, destroy unreferenced disks), refusing up front
// when any VM has protection set, then removes the sample's SDN zone, vnets and subnets when no
// remaining VM uses them.
func (b *Backend) Teardown(ctx context.Context, sandboxID string, opts backends.TeardownOptions) error {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	sb, refs, err := b.resolve(ctx, sandboxID, opts.Force)
	if err != nil {
		return err
	}
	for _, r := range refs {
		var conf map[string]any
		if err := b.get(ctx, r.path()+"/config", &conf); err != nil {
			return fmt.Errorf("read config of %s: %s", vmLabel(r), apiMessage(err))
		}
		if truthyAny(conf["protection"]) {
			return fmt.Errorf("refusing teardown of %s: %s has protection=1; clear it in Proxmox (Options > Protection) if this VM really is disposable", sandboxID, vmLabel(r))
		}
	}
	for _, r := range refs {
		if err := b.post(ctx, r.path()+"/status/stop", nil, "stop "+vmLabel(r)); err != nil {
			if !notFound(err) {
				return err
			}
		}
		var upid pve.UPID
		what := "destroy " + vmLabel(r)
		if err := b.client.Delete(ctx, r.path()+"?purge=1&destroy-unreferenced-disks=1", &upid); err != nil {
			if pve.IsNotFound(err) {
				continue // already gone
			}
			return fmt.Errorf("%s: %s", what, apiMessage(err))
		}
		if err := b.waitTask(ctx, upid, what); err != nil && !notFound(err) {
			return err
		}
	}
	b.invalidate(ids(refs)...)
	if sb.Sample != "" {
		// Name the sandbox, and that its VMs are already gone: only the zone's clean-up failed.
		if err := b.removeZone(ctx, sb.Sample); err != nil {
			return fmt.Errorf("%s: VMs destroyed, but %w", sandboxID, err)
		}
	}
	return nil
}

func notFound(err error) bool {
	if pve.IsNotFound(err) {
		return true
	}
	var te *TaskError
	return errors.As(err, &te) && strings.Contains(te.Message, "does not exist")
}

// removeZone deletes a sample zone's subnets, vnets and the zone, then applies, but only when
// no VM still has a NIC on one of its vnets.
func (b *Backend) removeZone(ctx context.Context, zone string) error {
	var vnets []map[string]any
	if err := b.get(ctx, "/cluster/sdn/vnets", &vnets); err != nil {
		return fmt.Errorf("teardown of zone %s: list vnets: %s", zone, apiMessage(err))
	}
	mine := map[string]bool{}
	for _, v := range vnets {
		if str(v["zone"]) == zone {
			mine[str(v["vnet"])] = true
		}
	}
	var rs pve.ClusterResources
	if err := b.get(ctx, "/cluster/resources?type=vm", &rs); err != nil {
		return fmt.Errorf("teardown of zone %s: list VMs: %s", zone, apiMessage(err))
	}
	for _, r := range rs {
		if r.Type != "qemu" {
			continue
		}
		var conf map[string]any
		if err := b.get(ctx, fmt.Sprintf("/nodes/%s/qemu/%d/config", r.Node, r.VMID), &conf); err != nil {
			if pve.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("teardown of zone %s: config of VM %d: %s", zone, r.VMID, apiMessage(err))
		}
		for _, n := range nics(conf) {
			if mine[n.bridge] {
				return nil // still in use (e.g. a template or another sandbox): keep the zone
			}
		}
	}
	for vn := range mine {
		var subs []map[string]any
		if err := b.get(ctx, "/cluster/sdn/vnets/"+vn+"/subnets", &subs); err != nil && !pve.IsNotFound(err) {
			return fmt.Errorf("teardown of zone %s: subnets of %s: %s", zone, vn, apiMessage(err))
		}
		for _, s := range subs {
			if err := b.client.Delete(ctx, "/cluster/sdn/vnets/"+vn+"/subnets/"+str(s["subnet"]), nil); err != nil && !pve.IsNotFound(err) {
				return fmt.Errorf("teardown of zone %s: delete subnet %s: %s", zone, str(s["subnet"]), apiMessage(err))
			}
		}
		if err := b.client.Delete(ctx, "/cluster/sdn/vnets/"+vn, nil); err != nil && !pve.IsNotFound(err) {
			return fmt.Errorf("teardown of zone %s: delete vnet %s: %s", zone, vn, apiMessage(err))
		}
	}
	if err := b.client.Delete(ctx, "/cluster/sdn/zones/"+zone, nil); err != nil && !pve.IsNotFound(err) {
		return fmt.Errorf("teardown of zone %s: %s", zone, apiMessage(err))
	}
	var upid pve.UPID
	if err := b.client.Put(ctx, "/cluster/sdn", nil, &upid); err != nil {
		return fmt.Errorf("teardown of zone %s: apply SDN: %s", zone, apiMessage(err))
	}
	b.invalidate()
	return b.waitTask(ctx, upid, "apply SDN after removing zone "+zone)
}

package proxmox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
)

// pveQuarantinePlan is every NIC a quarantine set link_down=1 on, with its string exactly as it
// was: release writes those strings back.
type pveQuarantinePlan struct {
	NICs []pveNIC `json:"nics"`
}

type pveNIC struct {
	Node  string `json:"node"`
	VMID  int    `json:"vmid"`
	Key   string `json:"key"`   // net0, net1, …
	Value string `json:"value"` // the NIC string before the quarantine
}

// linkDown returns a NIC string with link_down=1 and every other option kept in place.
func linkDown(nic string) string {
	parts := strings.Split(nic, ",")
	out := parts[:0:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, "link_down=") {
			out = append(out, p)
		}
	}
	return strings.Join(append(out, "link_down=1"), ",")
}

// Quarantine sets link_down=1 on every NIC of every VM of the sandbox: the guests keep running
// and keep their disks and memory, with their links cut.
func (b *Backend) Quarantine(ctx context.Context, sandboxID string, save func(plan []byte) error) error {
	_, refs, err := b.resolve(ctx, sandboxID, false)
	if err != nil {
		return err
	}
	var plan pveQuarantinePlan
	for _, r := range refs {
		keys := make([]string, 0, len(r.conf))
		for k := range r.conf {
			if isIndexed(k, "net") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			plan.NICs = append(plan.NICs, pveNIC{Node: r.node, VMID: r.vmid, Key: k, Value: fmt.Sprint(r.conf[k])})
		}
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	if err := save(raw); err != nil {
		return fmt.Errorf("quarantine %s: record not saved, nothing changed: %w", sandboxID, err)
	}
	return b.setNICs(ctx, plan, linkDown)
}

// Release writes back every NIC string the quarantine recorded.
func (b *Backend) Release(ctx context.Context, sandboxID string, raw []byte) error {
	var plan pveQuarantinePlan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return fmt.Errorf("release %s: unreadable quarantine record: %w", sandboxID, err)
	}
	return b.setNICs(ctx, plan, func(v string) string { return v })
}

// setNICs writes every VM's NICs in one config update per VM.
func (b *Backend) setNICs(ctx context.Context, plan pveQuarantinePlan, value func(string) string) error {
	type vm struct {
		node string
		id   int
	}
	by := map[vm]map[string]any{}
	var order []vm
	for _, n := range plan.NICs {
		k := vm{n.Node, n.VMID}
		if by[k] == nil {
			by[k] = map[string]any{}
			order = append(order, k)
		}
		by[k][n.Key] = value(n.Value)
	}
	var errs []error
	for _, k := range order {
		backends.Progress(ctx, "VM %d: set %d NIC(s)", k.id, len(by[k]))
		if err := b.client.Put(ctx, fmt.Sprintf("/nodes/%s/qemu/%d/config", k.node, k.id), by[k], nil); err != nil {
			errs = append(errs, fmt.Errorf("VM %d: %s", k.id, apiMessage(err)))
		}
		b.invalidate(k.id)
	}
	return errors.Join(errs...)
}

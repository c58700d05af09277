package proxmox

import (
	"sort"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

func TestDiscoverGroupsInspectVMsBySampleZone(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	sbs, err := b.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range sbs {
		ids = append(ids, s.ID)
	}
	want := []string{"pve:lab/cyb001z", "pve:lab/cyb002z", "pve:lab/vm-200", "pve:lab/web003z"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("sandboxes = %v, want %v (template 9000 hidden)", ids, want)
	}
	weak := findSandbox(t, sbs, "pve:lab/cyb001z")
	if !weak.Inspect || !weak.Actionable || !weak.Simulated || weak.Backend != backends.KindProxmox {
		t.Errorf("cyb001z flags: inspect=%v actionable=%v simulated=%v kind=%v", weak.Inspect, weak.Actionable, weak.Simulated, weak.Backend)
	}
	if weak.Task != "cyb" || weak.Sample != "cyb001z" || weak.Status != backends.StatusRunning || len(weak.Members) != 2 {
		t.Errorf("cyb001z: task=%q sample=%q status=%v members=%d", weak.Task, weak.Sample, weak.Status, len(weak.Members))
	}
	extra := map[string]string{}
	for _, kv := range weak.Extra {
		extra[kv.Key] = kv.Value
	}
	if extra["pool"] != "evals" || extra["zone"] != "cyb001z" || extra["node"] != "pve" || extra["tags"] != "inspect" || extra["vnets"] != "cyb001v0" {
		t.Errorf("cyb001z extra = %v", extra)
	}
	if weak.Created.IsZero() || weak.Members[0].Created.Unix() != 1764745260 {
		t.Errorf("created from meta ctime: sandbox %v, member %v", weak.Created, weak.Members[0].Created)
	}
	mixed := findSandbox(t, sbs, "pve:lab/web003z")
	if mixed.Status != backends.StatusPartial {
		t.Errorf("web003z status = %v, want partial", mixed.Status)
	}
	plain := findSandbox(t, sbs, "pve:lab/vm-200")
	if plain.Inspect || plain.Actionable || plain.Name != "build-cache" {
		t.Errorf("vm-200: inspect=%v actionable=%v name=%q", plain.Inspect, plain.Actionable, plain.Name)
	}
}

func TestDiscoverShowsTemplatesOnlyWhenAsked(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	b.showTemplates = true
	sbs, err := b.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := findSandbox(t, sbs, "pve:lab/vm-9000")
	if tmpl.Actionable || tmpl.Members[0].Labels["template"] != "1" {
		t.Errorf("template sandbox: actionable=%v labels=%v", tmpl.Actionable, tmpl.Members[0].Labels)
	}
}

func TestActionsRefuseNonSandboxAndUnknown(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	if _, err := b.Snapshot(ctx, "pve:lab/vm-200", backends.SnapshotOptions{Name: "x1"}); err == nil || !strings.Contains(err.Error(), backends.ErrNotSandbox.Error()) {
		t.Errorf("snapshot of non-sandbox: %v", err)
	}
	if err := b.Teardown(ctx, "pve:lab/nope", backends.TeardownOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("teardown of unknown: %v", err)
	}
	if ok, why := backends.Supports(b, backends.ActionReset); ok || why != "reset: use revert (native snapshots)" {
		t.Errorf("reset support = %v %q", ok, why)
	}
	for _, a := range []backends.Action{backends.ActionSnapshot, backends.ActionRevert, backends.ActionTeardown, backends.ActionExec, backends.ActionCopy, backends.ActionProbe} {
		if ok, why := backends.Supports(b, a); !ok {
			t.Errorf("%s unsupported: %s", a, why)
		}
	}
}

func TestValidateSnapshotName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"clean", true}, {"rk-20261203-074500", true}, {"a_b", true},
		{"", false}, {"x", false}, {"1abc", false}, {"current", false}, {"pending", false},
		{"has space", false}, {"dot.name", false}, {strings.Repeat("a", 41), false}, {strings.Repeat("a", 40), true},
	} {
		if err := ValidateSnapshotName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateSnapshotName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func ruleIDs(fs []backends.Finding, member string) []string {
	seen := map[string]bool{}
	for _, f := range fs {
		if member == "" || f.Member == member {
			seen[f.RuleID] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

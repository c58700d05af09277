package proxmox

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/watch"
)

func nicOf(t *testing.T, b *Backend, sim *pvesim.Server, vmid int, key string) string {
	t.Helper()
	var conf map[string]any
	if err := b.get(ctxT(t), "/nodes/"+sim.Node()+"/qemu/"+itoa(vmid)+"/config", &conf); err != nil {
		t.Fatal(err)
	}
	s, _ := conf[key].(string)
	return s
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A hardened sample's net0 moved to a host bridge with an uplink (through the API, as an operator
// would) raises a drift alert naming the bridge. The VM keeps a second NIC on the sample's vnet:
// discovery groups VMs by their SDN zone, so a VM whose only NIC leaves the zone is listed on its
// own (and baselined there) instead.
func TestNICMovedToUplinkBridgeRaisesAlert(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	sim.SetConfig(111, "net1", "virtio,bridge=cyb002v0,firewall=1")
	b.interval, b.maxInterval = 20*time.Millisecond, 80*time.Millisecond
	sup := supervisor.New([]backends.Backend{b}, supervisor.Backoff{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := watch.New(sup, db, watch.Options{Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; wait(); db.Close() })
	const id = "pve:lab/cyb002z"
	waitUntil(t, "the baseline of "+id, func() bool {
		bs, _ := db.Baselines()
		for _, bl := range bs {
			if bl.SandboxID == id {
				return true
			}
		}
		return false
	})
	if err := b.client.Put(ctxT(t), "/nodes/"+sim.Node()+"/qemu/111/config", map[string]any{"net0": "virtio,bridge=vmbr0,firewall=1"}, nil); err != nil {
		t.Fatal(err)
	}
	var got state.Alert
	waitUntil(t, "the drift alert", func() bool {
		as, _ := db.Alerts(state.AlertQuery{SandboxID: id})
		for _, a := range as {
			if a.Rule == "PVE-N02" {
				got = a
				return true
			}
		}
		return false
	})
	if got.Severity != catalog.SeverityCritical || !strings.Contains(got.After, "vmbr0") || !strings.Contains(got.Before, "not in baseline") {
		t.Errorf("alert %+v", got)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

// Quarantine sets link_down=1 on every NIC of every VM and keeps them running; release writes
// back each NIC string exactly as it was, options and order included.
func TestQuarantineLinkDownReleaseRestoresNICStrings(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	const id = "pve:lab/cyb001z"
	before := map[string]string{"101/net0": nicOf(t, b, sim, 101, "net0"), "101/net1": nicOf(t, b, sim, 101, "net1"), "102/net0": nicOf(t, b, sim, 102, "net0")}
	sim.SetConfig(101, "net1", "virtio=BC:24:11:00:00:01,bridge=vmbr0,link_down=0,tag=7")
	before["101/net1"] = nicOf(t, b, sim, 101, "net1")
	var saved []byte
	if err := b.Quarantine(ctxT(t), id, func(p []byte) error { saved = p; return nil }); err != nil {
		t.Fatal(err)
	}
	var plan pveQuarantinePlan
	if err := json.Unmarshal(saved, &plan); err != nil || len(plan.NICs) != 3 {
		t.Fatalf("plan %s (%v)", saved, err)
	}
	for k := range before {
		vm, key, _ := strings.Cut(k, "/")
		v := nicOf(t, b, sim, atoi(vm), key)
		if !strings.HasSuffix(v, ",link_down=1") || strings.Count(v, "link_down") != 1 {
			t.Errorf("%s during quarantine: %q", k, v)
		}
	}
	if got := nicOf(t, b, sim, 101, "net1"); got != "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=7,link_down=1" {
		t.Errorf("net1 during quarantine %q: other options must stay", got)
	}
	sbs, err := b.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if sb := findSandbox(t, sbs, id); sb.Status != backends.StatusRunning {
		t.Errorf("quarantined sandbox status %s, want its VMs still running", sb.Status)
	}
	if err := b.Release(ctxT(t), id, saved); err != nil {
		t.Fatal(err)
	}
	for k, want := range before {
		vm, key, _ := strings.Cut(k, "/")
		if got := nicOf(t, b, sim, atoi(vm), key); got != want {
			t.Errorf("%s after release %q, want exactly %q", k, got, want)
		}
	}
}

func atoi(s string) int { var i int; _ = json.Unmarshal([]byte(s), &i); return i }

package proxmox

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

// BenchmarkGroup measures turning 3,000 VMs in 1,000 sample zones into sandboxes with posture.
func BenchmarkGroup(b *testing.B) {
	be := &Backend{name: "bench", configs: map[int]cachedVM{}}
	sdn := &sdnView{vnets: map[string]map[string]any{}, subnets: map[string][]map[string]any{}}
	var refs []vmRef
	for z := 0; z < 1000; z++ {
		zone, vnet := fmt.Sprintf("b%02d%03dz", z/1000, z%1000), fmt.Sprintf("b%03dv0", z)
		sdn.vnets[vnet] = map[string]any{"vnet": vnet, "zone": zone}
		sdn.subnets[vnet] = []map[string]any{{"subnet": zone + "-10.0.0.0-24", "cidr": "10.0.0.0/24", "snat": float64(z % 2)}}
		for i := 0; i < 3; i++ {
			id := 1000 + z*3 + i
			conf := map[string]any{"tags": "inspect", "agent": "1", "cpu": "host", "net0": "virtio=BC:24:11:00:00:01,bridge=" + vnet}
			be.configs[id] = cachedVM{conf: conf, fw: map[string]any{}}
			refs = append(refs, vmRef{node: "pve", vmid: id, name: fmt.Sprintf("vm%d", i), conf: conf,
				res: &resource{VMID: uint64(id), Node: "pve", Status: "running", Tags: "inspect"}})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		f := be.group(refs, sdn)
		if len(f.sandboxes) != 1000 {
			b.Fatalf("%d sandboxes", len(f.sandboxes))
		}
	}
}

// BenchmarkRefreshSimulated measures one steady-state Watch refresh (one /cluster/resources call,
// configs cached) of the demo range over loopback HTTP.
func BenchmarkRefreshSimulated(b *testing.B) {
	sim, err := pvesim.StartDemo(pvesim.Options{TaskDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	be, err := NewSimulated("bench", sim)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := be.discover(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.discover(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleTick300 measures one Watch tick on an idle range of 300 VMs in 100 sample zones
// (configs within their cache lifetime): the refresh plus whatever Watch must compare to find
// that nothing changed.
func BenchmarkIdleTick300(b *testing.B) {
	sim, err := pvesim.StartDemo(pvesim.Options{TaskDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	for z := range 100 {
		zone, vnet := fmt.Sprintf("bn%03dz", z), fmt.Sprintf("bn%03dv0", z)
		sim.AddZone(zone, map[string][]pvesim.Subnet{vnet: {{CIDR: fmt.Sprintf("10.%d.%d.0/24", 100+z/250, z%250)}}})
		for i := range 3 {
			if _, err := sim.AddVM(pvesim.VMSpec{VMID: 2000 + z*3 + i, Name: fmt.Sprintf("vm%d", i), Tags: "inspect", Running: true,
				Config: map[string]any{"agent": "1", "net0": "virtio,bridge=" + vnet + ",firewall=1"}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	be, err := NewSimulated("bench", sim)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	last, err := be.discover(ctx)
	if err != nil {
		b.Fatal(err)
	}
	prev := index(last.sandboxes)
	b.ReportAllocs()
	for b.Loop() {
		f, err := be.discover(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if f == last {
			continue
		}
		for _, sb := range f.sandboxes { // what Watch compares when the fleet was rebuilt
			if old, ok := prev[sb.ID]; !ok || !reflect.DeepEqual(old, sb) {
				b.Fatalf("%s changed on an idle range", sb.ID)
			}
		}
		last, prev = f, index(f.sandboxes)
	}
}

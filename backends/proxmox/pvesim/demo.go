package pvesim

import "fmt"

// VersionSuffix ends the simulator's /version "version" (e.g. "9.1.1+pvesim") so clients can
// mark its sandboxes SIMULATED; repoid must stay hex per the schema.
const VersionSuffix = "+pvesim"

// StartDemo starts a simulator on loopback holding a demo range: an Inspect built-in template,
// three sample zones of Inspect-style VMs (one weak, one hardened, one mixed) and one VM that is
// not a sandbox. The caller must Close it.
func StartDemo(opts Options) (*Server, error) {
	s := Start(opts)
	if err := SeedDemo(s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// SeedDemo adds the demo range to a simulator.
func SeedDemo(s *Server) error {
	s.AddZone("inspvmz", map[string][]Subnet{"inspvmv0": {{CIDR: "192.168.250.0/24", Gateway: "192.168.250.1"}}})
	s.AddZone("cyb001z", map[string][]Subnet{"cyb001v0": {{CIDR: "192.168.21.0/24", Gateway: "192.168.21.1", SNAT: true, DHCP: true}}})
	s.AddZone("cyb002z", map[string][]Subnet{"cyb002v0": {{CIDR: "192.168.22.0/24"}}})
	s.AddZone("web003z", map[string][]Subnet{"web003v0": {{CIDR: "192.168.23.0/24", Gateway: "192.168.23.1"}}})
	hardenedFW := map[string]any{"enable": 1, "policy_in": "DROP", "policy_out": "DROP", "ipfilter": 1}
	ctime := 1764745200
	meta := func(i int) string { return fmt.Sprintf("creation-qemu=9.2.0,ctime=%d", ctime+i*60) }
	agentWith := func(files map[string]string) *Agent {
		a := NewAgent()
		for k, v := range files {
			a.Files[k] = []byte(v)
		}
		return a
	}
	vms := []VMSpec{
		{VMID: 9000, Name: "inspect-ubuntu24.04", Tags: "inspect,builtin-ubuntu24.04",
			Config: map[string]any{"template": 1, "protection": 1, "agent": "1", "meta": meta(0)}},
		// cyb001z: the weak sample: host bridge with uplink, firewall off, cpu host, SNAT egress.
		{VMID: 101, Name: "default", Tags: "inspect", Pool: "evals", Running: true,
			Config: map[string]any{"agent": "enabled=1", "cpu": "host", "meta": meta(1),
				"net0": "virtio,bridge=cyb001v0", "net1": "virtio,bridge=vmbr0"},
			Agent: agentWith(map[string]string{"/etc/hostname": "default\n", "/flag.txt": "rk{demo-flag}\n"})},
		{VMID: 102, Name: "victim", Tags: "inspect", Pool: "evals", Running: true,
			Config: map[string]any{"agent": "1", "cpu": "host", "meta": meta(2), "net0": "e1000,bridge=cyb001v0",
				"args": "-netdev user,id=n9"}},
		// cyb002z: the hardened sample.
		{VMID: 111, Name: "default", Tags: "inspect", Pool: "evals", Running: true, Firewall: hardenedFW,
			Config: map[string]any{"agent": "1", "cpu": "x86-64-v2-AES", "meta": meta(3), "net0": "virtio,bridge=cyb002v0,firewall=1"},
			Agent:  agentWith(map[string]string{"/etc/hostname": "default\n"})},
		{VMID: 112, Name: "target", Tags: "inspect", Pool: "evals", Running: true, Firewall: hardenedFW,
			Config: map[string]any{"cpu": "x86-64-v2-AES", "meta": meta(4), "net0": "virtio,bridge=cyb002v0,firewall=1"}},
		// web003z: mixed, one VM stopped.
		{VMID: 121, Name: "default", Tags: "inspect;web", Running: true, Firewall: map[string]any{"enable": 1},
			Config: map[string]any{"agent": "1", "meta": meta(5), "net0": "virtio,bridge=web003v0,firewall=1"}},
		{VMID: 122, Name: "db", Tags: "inspect;web", Running: false,
			Config: map[string]any{"meta": meta(6), "net0": "virtio,bridge=web003v0,firewall=1"}},
		{VMID: 200, Name: "build-cache", Tags: "infra", Running: true,
			Config: map[string]any{"meta": meta(7), "net0": "virtio,bridge=vmbr0,firewall=1"}},
	}
	for _, v := range vms {
		if _, err := s.AddVM(v); err != nil {
			return err
		}
	}
	return nil
}

package pvesim

import (
	"fmt"
	"strings"
	"time"
)

// VMSpec seeds a VM directly into the simulator (as an operator's existing range would be).
type VMSpec struct {
	VMID     int // 0 picks the next free id
	Name     string
	Config   map[string]any // PVE config keys; ints for booleans/integers, strings for property strings
	Running  bool
	Pool     string         // created when missing
	Tags     string         // normalised like PVE does
	Firewall map[string]any // VM firewall options
	Agent    *Agent
}

// AddVM creates a VM and returns its id.
func (s *Server) AddVM(spec VMSpec) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := spec.VMID
	if id == 0 {
		for id = 100; s.st.vms[id] != nil; id++ {
		}
	}
	if _, taken := s.st.vms[id]; taken {
		return 0, fmt.Errorf("pvesim: VM %d already exists", id)
	}
	conf := map[string]any{"memory": "2048", "cores": 2, "ostype": "l26", "scsi0": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", id)}
	for k, v := range spec.Config {
		conf[k] = storeKey(k, v)
	}
	if spec.Name != "" {
		conf["name"] = spec.Name
	}
	if spec.Tags != "" {
		t, err := normalizeTags(spec.Tags)
		if err != nil {
			return 0, fmt.Errorf("pvesim: tags %q: %v", spec.Tags, err)
		}
		conf["tags"] = t
	}
	for k, v := range conf {
		if netKeyRE.MatchString(k) {
			conf[k] = s.withMAC(fmt.Sprint(v))
		}
	}
	if spec.Pool != "" {
		if _, ok := s.st.pools[spec.Pool]; !ok {
			s.st.pools[spec.Pool] = ""
		}
	}
	a := spec.Agent
	if a == nil {
		a = newAgent()
	}
	if a.Files == nil {
		a.Files = map[string][]byte{}
	}
	if a.Commands == nil {
		a.Commands = map[string]ExecResult{}
	}
	fw := map[string]any{}
	for k, v := range spec.Firewall {
		fw[k] = storeKey(k, v)
	}
	v := &vm{id: id, conf: conf, running: spec.Running, pool: spec.Pool, snaps: map[string]*snapshot{}, fw: fw, agent: a}
	if spec.Running {
		v.started = time.Now()
	}
	s.st.vms[id] = v
	return id, nil
}

// NewAgent returns an empty scriptable guest agent.
func NewAgent() *Agent { return newAgent() }

// RemoveVM deletes a VM out of band (as another operator would), for watch tests.
func (s *Server) RemoveVM(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.st.vms, id)
}

// SetRunning changes a VM's run state out of band.
func (s *Server) SetRunning(id int, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.st.vms[id]; v != nil {
		v.running = running
		if running {
			v.started = time.Now()
		}
	}
}

// SetConfig sets (or with nil deletes) one config key out of band.
func (s *Server) SetConfig(id int, key string, val any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.st.vms[id]; v != nil {
		if val == nil {
			delete(v.conf, key)
		} else {
			v.conf[key] = storeKey(key, val)
		}
	}
}

// WithAgent runs fn on a VM's guest agent under the simulator's lock (to script commands,
// inspect files or take the agent down).
func (s *Server) WithAgent(id int, fn func(*Agent)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.vms[id]
	if v == nil {
		return false
	}
	fn(v.agent)
	return true
}

// HasVM reports whether a VM exists.
func (s *Server) HasVM(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.vms[id] != nil
}

// Subnet seeds an SDN subnet; DHCP makes the zone use PVE's IPAM and dnsmasq.
type Subnet struct {
	CIDR, Gateway string
	SNAT          bool
	DHCP          bool
}

// AddZone seeds a simple SDN zone with one vnet per entry of vnets, each with the given subnets.
func (s *Server) AddZone(zone string, vnets map[string][]Subnet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := map[string]any{"zone": zone, "type": "simple", "digest": "0"}
	s.st.zones[zone] = z
	for vn, subs := range vnets {
		s.st.vnets[vn] = map[string]any{"vnet": vn, "zone": zone, "type": "vnet", "digest": "0"}
		for _, sub := range subs {
			id := zone + "-" + replaceSlash(sub.CIDR)
			snat := 0
			if sub.SNAT {
				snat = 1
			}
			if s.st.subnets[vn] == nil {
				s.st.subnets[vn] = map[string]map[string]any{}
			}
			s.st.subnets[vn][id] = map[string]any{"subnet": id, "cidr": sub.CIDR, "type": "subnet", "vnet": vn,
				"zone": zone, "gateway": sub.Gateway, "snat": snat, "digest": "0"}
			if sub.DHCP {
				z["ipam"], z["dhcp"] = "pve", "dnsmasq"
				s.st.subnets[vn][id]["dhcp-range"] = []any{"start-address=" + hostAddr(sub.CIDR, 50) + ",end-address=" + hostAddr(sub.CIDR, 100)}
			}
		}
	}
}

// HasZone reports whether an SDN zone exists; HasVNet likewise for a vnet.
func (s *Server) HasZone(zone string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.zones[zone] != nil
}

func (s *Server) HasVNet(vnet string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.vnets[vnet] != nil
}

func replaceSlash(cidr string) string {
	b := []byte(cidr)
	for i := range b {
		if b[i] == '/' {
			b[i] = '-'
		}
	}
	return string(b)
}

// hostAddr replaces the last octet of an IPv4 CIDR's network address ("10.0.0.0/24", 50 -> 10.0.0.50).
func hostAddr(cidr string, n int) string {
	ip := cidr
	if i := strings.IndexByte(ip, '/'); i >= 0 {
		ip = ip[:i]
	}
	if i := strings.LastIndexByte(ip, '.'); i >= 0 {
		ip = ip[:i]
	}
	return fmt.Sprintf("%s.%d", ip, n)
}

package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var sdnIDRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*[a-zA-Z0-9]$`)

func (s *Server) version(*call) (any, error) {
	return map[string]any{"version": "9.1.1" + VersionSuffix, "release": "9.1", "repoid": "5e1a7ed0"}, nil
}

func (s *Server) ticket(c *call) (any, error) {
	if strings.HasPrefix(c.r.Header.Get("Authorization"), "PVEAPIToken") {
		return nil, &apiError{status: 403, msg: "URI '/access/ticket' not available with API token, need proper ticket."}
	}
	user, pass := c.str("username"), c.str("password")
	if r := c.str("realm"); r != "" && !strings.Contains(user, "@") {
		user += "@" + r
	}
	ok := s.opts.Password != "" && user == s.opts.User && pass == s.opts.Password
	if !ok { // renewal: the current ticket as password
		if u, valid := s.verifyTicket(pass); valid && u == user {
			ok = true
		}
	}
	if !ok {
		return nil, &apiError{status: 401, msg: "authentication failure"}
	}
	t, csrf := s.ticketFor(user, time.Now())
	return map[string]any{"username": user, "ticket": t, "CSRFPreventionToken": csrf,
		"cap": map[string]any{"vms": map[string]any{"VM.Audit": 1}}}, nil
}

func (s *Server) nodes(*call) (any, error) {
	return []map[string]any{{
		"node": s.opts.Node, "status": "online", "cpu": 0.05, "maxcpu": 16, "mem": int64(8) << 30,
		"maxmem": int64(64) << 30, "disk": int64(20) << 30, "maxdisk": int64(100) << 30, "uptime": 86400,
		"level": "", "id": "node/" + s.opts.Node, "type": "node",
		"ssl_fingerprint": "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99",
	}}, nil
}

// clusterStatus emits numbers for online/local/quorate: go-proxmox's Cluster.UnmarshalJSON
// asserts float64 and panics on JSON booleans.
func (s *Server) clusterStatus(*call) (any, error) {
	return []map[string]any{
		{"type": "cluster", "id": "cluster", "name": "rangesim", "nodes": 1, "version": 1, "quorate": 1},
		{"type": "node", "id": "node/" + s.opts.Node, "name": s.opts.Node, "nodeid": 1, "ip": "127.0.0.1",
			"local": 1, "online": 1, "level": ""},
	}, nil
}

// nextID returns a string, as PVE does despite its schema saying integer.
func (s *Server) nextID(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.has("vmid") {
		id := c.integer("vmid", 0)
		if _, taken := s.st.vms[id]; taken {
			return nil, paramErr(map[string]string{"vmid": fmt.Sprintf("VM %d already exists", id)})
		}
		return strconv.Itoa(id), nil
	}
	for id := 100; ; id++ {
		if _, taken := s.st.vms[id]; !taken {
			return strconv.Itoa(id), nil
		}
	}
}

// resource is API2Tools::extract_vm_stats: template as the number 0/1.
func (s *Server) resource(v *vm) map[string]any {
	st := s.vmStatus(v, false)
	m := map[string]any{
		"id": fmt.Sprintf("qemu/%d", v.id), "type": "qemu", "vmid": v.id, "node": s.st.node,
		"name": v.name(), "status": st["status"], "template": 0, "maxcpu": v.cpus(), "cpu": st["cpu"],
		"maxmem": v.maxmem(), "mem": st["mem"], "maxdisk": st["maxdisk"], "disk": 0, "netin": 0,
		"netout": 0, "diskread": 0, "diskwrite": 0, "uptime": st["uptime"],
	}
	if v.isTemplate() {
		m["template"] = 1
	}
	for _, k := range []string{"tags", "lock"} {
		if x, ok := st[k]; ok {
			m[k] = x
		}
	}
	if v.pool != "" {
		m["pool"] = v.pool
	}
	return m
}

func (s *Server) resources(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := c.str("type")
	switch typ {
	case "", "vm", "storage", "node", "sdn":
	default:
		return nil, paramErr(map[string]string{"type": "value '" + typ + "' does not have a value in the enumeration 'vm, storage, node, sdn'"})
	}
	out := []map[string]any{}
	if typ == "" || typ == "vm" {
		for _, id := range s.sortedIDs() {
			out = append(out, s.resource(s.st.vms[id]))
		}
	}
	if typ == "" || typ == "node" {
		out = append(out, map[string]any{"id": "node/" + s.st.node, "type": "node", "node": s.st.node,
			"status": "online", "maxcpu": 16, "cpu": 0.05, "maxmem": int64(64) << 30, "mem": int64(8) << 30, "uptime": 86400, "level": ""})
	}
	if typ == "" || typ == "sdn" {
		for _, z := range sortedKeys(s.st.zones) {
			out = append(out, map[string]any{"id": "sdn/" + s.st.node + "/" + z, "type": "sdn", "sdn": z,
				"node": s.st.node, "status": "ok"})
		}
	}
	if typ == "" {
		for _, p := range sortedKeys(s.st.pools) {
			out = append(out, map[string]any{"id": "/pool/" + p, "type": "pool", "pool": p})
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Server) poolsGet(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.str("poolid")
	if pid, ok := c.vars["poolid"]; ok {
		id = pid
	}
	if id == "" {
		out := []map[string]any{}
		for _, p := range sortedKeys(s.st.pools) {
			e := map[string]any{"poolid": p}
			if s.st.pools[p] != "" {
				e["comment"] = s.st.pools[p]
			}
			out = append(out, e)
		}
		return out, nil
	}
	comment, ok := s.st.pools[id]
	if !ok {
		return nil, fail500("pool '%s' does not exist", id)
	}
	members := []map[string]any{}
	for _, vid := range s.sortedIDs() {
		if v := s.st.vms[vid]; v.pool == id {
			members = append(members, s.resource(v))
		}
	}
	e := map[string]any{"poolid": id, "comment": comment, "members": members}
	if _, legacy := c.vars["poolid"]; legacy {
		return map[string]any{"comment": comment, "members": members}, nil
	}
	return []map[string]any{e}, nil
}

func (s *Server) poolsPost(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.str("poolid")
	if _, ok := s.st.pools[id]; ok {
		return nil, fail500("create pool failed: pool '%s' already exists", id)
	}
	s.st.pools[id] = c.str("comment")
	return nil, nil
}

func (s *Server) poolsPut(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.str("poolid")
	if _, ok := s.st.pools[id]; !ok {
		return nil, fail500("pool '%s' does not exist", id)
	}
	if c.has("comment") {
		s.st.pools[id] = c.str("comment")
	}
	for _, raw := range strings.FieldsFunc(c.str("vms"), func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
		vid, _ := strconv.Atoi(raw)
		v, ok := s.st.vms[vid]
		if !ok {
			return nil, fail500("VM %s does not exist", raw)
		}
		switch {
		case c.boolean("delete"):
			if v.pool == id {
				v.pool = ""
			}
		case v.pool != "" && v.pool != id && !c.boolean("allow-move"):
			return nil, fail500("VM %d belongs already to pool '%s' and allow-move is not set", vid, v.pool)
		default:
			v.pool = id
		}
	}
	return nil, nil
}

func (s *Server) poolsDelete(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.str("poolid")
	if _, ok := s.st.pools[id]; !ok {
		return nil, fail500("pool '%s' does not exist", id)
	}
	for _, v := range s.st.vms {
		if v.pool == id {
			return nil, fail500("pool '%s' is not empty", id)
		}
	}
	delete(s.st.pools, id)
	return nil, nil
}

// --- SDN: changes are applied immediately; PUT /cluster/sdn returns the reload task. ---------

func (s *Server) zonesGet(*call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, z := range sortedKeys(s.st.zones) {
		out = append(out, cloneConf(s.st.zones[z]))
	}
	return out, nil
}

func (s *Server) zonesPost(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.str("zone")
	if !sdnIDRE.MatchString(id) || len(id) > 8 {
		return nil, paramErr(map[string]string{"zone": "invalid format - invalid sdn zone id '" + id + "'"})
	}
	if _, ok := s.st.zones[id]; ok {
		return nil, fail500("sdn zone object ID '%s' already defined", id)
	}
	z := map[string]any{"zone": id, "type": c.str("type"), "digest": "0"}
	for _, k := range []string{"ipam", "dhcp", "nodes", "dns", "reversedns", "dnszone"} {
		if c.has(k) {
			z[k] = c.str(k)
		}
	}
	if c.has("mtu") {
		z["mtu"] = c.integer("mtu", 0)
	}
	s.st.zones[id] = z
	return nil, nil
}

func (s *Server) zoneDelete(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.vars["zone"]
	if _, ok := s.st.zones[id]; !ok {
		return nil, fail500("sdn zone object ID '%s' does not exist", id)
	}
	for _, vn := range sortedKeys(s.st.vnets) {
		if s.st.vnets[vn]["zone"] == id {
			return nil, fail500("Can't delete zone %s, vnet %s is using it", id, vn)
		}
	}
	delete(s.st.zones, id)
	return nil, nil
}

func (s *Server) vnetsGet(*call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, v := range sortedKeys(s.st.vnets) {
		out = append(out, cloneConf(s.st.vnets[v]))
	}
	return out, nil
}

func (s *Server) vnetsPost(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, zone := c.str("vnet"), c.str("zone")
	if !sdnIDRE.MatchString(id) || len(id) > 8 {
		return nil, paramErr(map[string]string{"vnet": "invalid format - invalid sdn vnet id '" + id + "'"})
	}
	if _, ok := s.st.vnets[id]; ok {
		return nil, fail500("sdn vnet object ID '%s' already defined", id)
	}
	if _, ok := s.st.zones[zone]; !ok {
		return nil, paramErr(map[string]string{"zone": "zone '" + zone + "' does not exist"})
	}
	v := map[string]any{"vnet": id, "zone": zone, "type": "vnet", "digest": "0"}
	if c.has("alias") {
		v["alias"] = c.str("alias")
	}
	if c.has("isolate-ports") {
		v["isolate-ports"] = storeKey("isolate-ports", c.params["isolate-ports"])
	}
	s.st.vnets[id] = v
	return nil, nil
}

func (s *Server) vnetDelete(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.vars["vnet"]
	if _, ok := s.st.vnets[id]; !ok {
		return nil, fail500("sdn vnet object ID '%s' does not exist", id)
	}
	if len(s.st.subnets[id]) > 0 {
		return nil, paramErr(map[string]string{"vnet": "Can't delete vnet if subnets exists"})
	}
	delete(s.st.vnets, id)
	return nil, nil
}

func (s *Server) subnetsGet(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vn := c.vars["vnet"]
	if _, ok := s.st.vnets[vn]; !ok {
		return nil, fail500("sdn vnet object ID '%s' does not exist", vn)
	}
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.subnets[vn]) {
		out = append(out, cloneConf(s.st.subnets[vn][id]))
	}
	return out, nil
}

func (s *Server) subnetsPost(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vn := c.vars["vnet"]
	v, ok := s.st.vnets[vn]
	if !ok {
		return nil, fail500("sdn vnet object ID '%s' does not exist", vn)
	}
	cidr := c.str("subnet")
	if !strings.Contains(cidr, "/") {
		return nil, paramErr(map[string]string{"subnet": "invalid format - invalid IP with prefix '" + cidr + "'"})
	}
	zone := fmt.Sprint(v["zone"])
	id := zone + "-" + strings.ReplaceAll(cidr, "/", "-")
	sub := map[string]any{"subnet": id, "cidr": cidr, "network": strings.Split(cidr, "/")[0],
		"type": "subnet", "vnet": vn, "zone": zone, "digest": "0"}
	if c.has("gateway") {
		sub["gateway"] = c.str("gateway")
	}
	if c.has("snat") {
		sub["snat"] = storeKey("snat", c.params["snat"])
	}
	if r, ok := c.params["dhcp-range"]; ok {
		sub["dhcp-range"] = r
	}
	if s.st.subnets[vn] == nil {
		s.st.subnets[vn] = map[string]map[string]any{}
	}
	s.st.subnets[vn][id] = sub
	return nil, nil
}

func (s *Server) subnetDelete(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vn, id := c.vars["vnet"], c.vars["subnet"]
	if _, ok := s.st.subnets[vn][id]; !ok {
		return nil, fail500("sdn subnet object ID '%s' does not exist", id)
	}
	delete(s.st.subnets[vn], id)
	return nil, nil
}

func (s *Server) sdnApply(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startTask("reloadnetworkall", "", c.user, nil, "", func() ([]string, error) {
		return []string{"reloading network config on " + s.st.node}, nil
	}), nil
}

package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	upidRE     = regexp.MustCompile(`^UPID:[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8,9}:[0-9A-Fa-f]{8}:[^:\s/]+:[^:\s/]*:[^:\s/]+:$`)
	tagRE      = regexp.MustCompile(`^[a-z0-9_][a-z0-9_\-+.]*$`)
	configIDRE = regexp.MustCompile(`(?i)^[a-z][a-z0-9_-]+$`)
	netKeyRE   = regexp.MustCompile(`^net\d+$`)
)

func (s *Server) checkNode(c *call) error {
	if n, ok := c.vars["node"]; ok && n != s.st.node {
		return fail500("hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known", n, n)
	}
	return nil
}

// loadVM is load_config: a missing VM is PVE's 500 "Configuration file ... does not exist".
func (s *Server) loadVM(c *call) (*vm, error) {
	if err := s.checkNode(c); err != nil {
		return nil, err
	}
	id, err := c.vmid()
	if err != nil {
		return nil, err
	}
	v, ok := s.st.vms[id]
	if !ok {
		return nil, fail500("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", s.st.node, id)
	}
	return v, nil
}

// vmStatus is QemuServer::vmstatus for one VM; template only when set (never "template":0).
func (s *Server) vmStatus(v *vm, full bool) map[string]any {
	m := map[string]any{
		"vmid": v.id, "name": v.name(), "status": "stopped", "cpus": v.cpus(), "maxmem": v.maxmem(),
		"maxdisk": int64(8) << 30, "disk": 0, "mem": 0, "netin": 0, "netout": 0, "uptime": 0, "cpu": 0,
		"diskread": 0, "diskwrite": 0,
	}
	if v.running {
		m["status"] = "running"
		m["pid"] = 10000 + v.id
		m["uptime"] = int64(time.Since(v.started).Seconds())
		m["mem"] = v.maxmem() / 4
		m["cpu"] = 0.02
	}
	if l := v.lock(); l != "" {
		m["lock"] = l
	}
	if t, ok := v.conf["tags"].(string); ok && t != "" {
		m["tags"] = t
	}
	if v.isTemplate() {
		m["template"] = 1
	}
	if full {
		qmp := m["status"]
		if v.paused {
			qmp = "paused"
		}
		m["qmpstatus"] = qmp
		m["ha"] = map[string]any{"managed": 0}
		if v.agentEnabled() {
			m["agent"] = 1
		}
		if v.running {
			m["running-machine"] = "pc-i440fx-9.2+pve1"
			m["running-qemu"] = "9.2.0"
		}
	}
	return m
}

func (s *Server) vmList(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(c); err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, id := range s.sortedIDs() {
		out = append(out, s.vmStatus(s.st.vms[id], c.boolean("full")))
	}
	return out, nil
}

func (s *Server) sortedIDs() []int {
	ids := make([]int, 0, len(s.st.vms))
	for id := range s.st.vms {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

func (s *Server) vmCurrent(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	return s.vmStatus(v, true), nil
}

func (s *Server) vmConfigGet(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	conf := v.conf
	if name := c.str("snapshot"); name != "" {
		sn, ok := v.snaps[name]
		if !ok {
			return nil, fail500("snapshot '%s' does not exist", name)
		}
		conf = sn.conf
	}
	out := cloneConf(conf)
	if _, ok := out["cipassword"]; ok {
		out["cipassword"] = "**********"
	}
	out["digest"] = v.digest()
	return out, nil
}

// rootOnly are config keys only root@pam may set (Qemu.pm $check_vm_modify_config_perm).
func rootOnly(key string, val any) bool {
	switch {
	case key == "args", key == "hookscript", key == "ivshmem", key == "spice_enhancements":
		return true
	case strings.HasPrefix(key, "hostpci"):
		return true
	case strings.HasPrefix(key, "usb"):
		return !strings.Contains(fmt.Sprint(val), "spice")
	case strings.HasPrefix(key, "serial"), strings.HasPrefix(key, "parallel"):
		return strings.HasPrefix(fmt.Sprint(val), "/dev/")
	}
	return false
}

// applyConfig validates and applies a config update; shared by POST (async) and PUT (sync).
func (s *Server) applyConfig(c *call, v *vm) error {
	if d := c.str("digest"); d != "" && d != v.digest() {
		return fail500("detected modified configuration - file changed by other user? Try again.")
	}
	if l := v.lock(); l != "" && !c.boolean("skiplock") {
		return fail500("VM is locked (%s)", l)
	}
	if c.has("skiplock") && c.user != "root@pam" {
		return paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	changes := map[string]any{}
	for k, val := range c.params {
		switch k {
		case "digest", "delete", "skiplock", "revert", "background_delay":
			continue
		}
		changes[k] = storeKey(k, val)
	}
	del := strings.FieldsFunc(c.str("delete"), func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
	if len(changes) == 0 && len(del) == 0 {
		return fail500("no options specified")
	}
	for k, val := range changes {
		if rootOnly(k, val) && c.user != "root@pam" {
			return permErr(fmt.Sprintf("/vms/%d", v.id), "only root can set '"+k+"' config")
		}
		if k == "tags" {
			t, err := normalizeTags(fmt.Sprint(val))
			if err != nil {
				return err
			}
			changes[k] = t
		}
		if netKeyRE.MatchString(k) {
			changes[k] = s.withMAC(fmt.Sprint(val))
		}
	}
	for k, val := range changes {
		v.conf[k] = val
	}
	for _, k := range del {
		delete(v.conf, k)
	}
	return nil
}

// withMAC gives "virtio,bridge=x" the generated MAC PVE adds: "virtio=BC:24:11:..,bridge=x".
func (s *Server) withMAC(net string) string {
	parts := strings.Split(net, ",")
	if len(parts) > 0 && !strings.Contains(parts[0], "=") {
		parts[0] = parts[0] + "=" + s.st.newMAC()
	}
	return strings.Join(parts, ",")
}

func (s *Server) vmConfigPost(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	if err := s.applyConfig(c, v); err != nil {
		return nil, err
	}
	return s.startTask("qmconfig", strconv.Itoa(v.id), c.user, nil, "", func() ([]string, error) { return nil, nil }), nil
}

func (s *Server) vmConfigPut(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	return nil, s.applyConfig(c, v)
}

func (s *Server) vmStart(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	return s.startTask("qmstart", strconv.Itoa(v.id), c.user, nil, "", func() ([]string, error) {
		if v.isTemplate() {
			return nil, fmt.Errorf("you can't start a vm if it's a template")
		}
		if v.running {
			return nil, fmt.Errorf("VM %d already running", v.id)
		}
		if l := v.lock(); l != "" {
			return nil, fmt.Errorf("VM is locked (%s)", l)
		}
		v.running, v.started = true, time.Now()
		return []string{fmt.Sprintf("start VM %d: UPID", v.id)}, nil
	}), nil
}

func (s *Server) vmStop(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	return s.startTask("qmstop", strconv.Itoa(v.id), c.user, nil, "", func() ([]string, error) {
		if l := v.lock(); l != "" && l != "suspended" {
			return nil, fmt.Errorf("VM is locked (%s)", l)
		}
		v.running, v.paused = false, false // stopping a stopped VM is a successful no-op
		v.agent.reset()
		return nil, nil
	}), nil
}

func (s *Server) vmShutdown(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	if v.paused && !c.boolean("forceStop") {
		return nil, fail500("VM is paused - cannot shutdown")
	}
	return s.startTask("qmshutdown", strconv.Itoa(v.id), c.user, nil, "", func() ([]string, error) {
		v.running = false
		v.agent.reset()
		return nil, nil
	}), nil
}

func (s *Server) vmClone(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	newid := c.integer("newid", 0)
	if newid < 100 || newid > 999999999 {
		return nil, paramErr(map[string]string{"newid": "value must have a minimum value of 100"})
	}
	if _, taken := s.st.vms[newid]; taken {
		return nil, fail500("unable to create VM %d: config file already exists", newid)
	}
	if l := src.lock(); l != "" {
		return nil, fail500("VM is locked (%s)", l)
	}
	snap := c.str("snapname")
	if snap != "" {
		if _, ok := src.snaps[snap]; !ok {
			return nil, fail500("snapshot '%s' does not exist", snap)
		}
	}
	full := !src.isTemplate()
	if c.has("full") {
		full = c.boolean("full")
	}
	if !full && !src.isTemplate() {
		return nil, fail500("parameter 'full' must be set for VM clones that are not templates: linked clone needs a template")
	}
	if !full && (c.has("storage") || c.has("format")) {
		return nil, paramErr(map[string]string{"storage": "parameter 'storage' not allowed for linked clones"})
	}
	pool := c.str("pool")
	if pool != "" {
		if _, ok := s.st.pools[pool]; !ok {
			return nil, fail500("pool '%s' does not exist", pool)
		}
	}
	base := src.conf
	if snap != "" {
		base = src.snaps[snap].conf
	}
	conf := cloneConf(base)
	delete(conf, "template")
	delete(conf, "parent")
	delete(conf, "snaptime")
	delete(conf, "vmstate")
	for k := range conf {
		if strings.HasPrefix(k, "unused") {
			delete(conf, k)
		}
		if netKeyRE.MatchString(k) {
			conf[k] = regenMAC(fmt.Sprint(conf[k]), s.st.newMAC())
		}
	}
	conf["name"] = "Copy-of-VM-" + src.name()
	if n := c.str("name"); n != "" {
		conf["name"] = n
	}
	if d := c.str("description"); d != "" {
		conf["description"] = d
	}
	conf["lock"] = "clone" // visible while the clone worker copies
	nv := &vm{id: newid, conf: conf, snaps: map[string]*snapshot{}, pool: pool, fw: cloneConf(src.fw),
		agent: src.agent.cloneFor()}
	s.st.vms[newid] = nv
	return s.startTask("qmclone", strconv.Itoa(src.id), c.user, nil, "", func() ([]string, error) {
		delete(nv.conf, "lock")
		kind := "linked"
		if full {
			kind = "full"
		}
		return []string{fmt.Sprintf("create %s clone of drive scsi0 (local-lvm:base-%d-disk-0)", kind, src.id)}, nil
	}), nil
}

// regenMAC replaces the MAC in "virtio=AA:..,bridge=x" with a new one, as clone does.
func regenMAC(net, mac string) string {
	parts := strings.Split(net, ",")
	if model, _, ok := strings.Cut(parts[0], "="); ok {
		parts[0] = model + "=" + mac
	}
	return strings.Join(parts, ",")
}

func (s *Server) vmDestroy(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	if c.has("skiplock") && c.user != "root@pam" {
		return nil, paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	if v.protected() {
		return nil, fail500("can't remove VM %d - protection mode enabled", v.id)
	}
	if v.running {
		return nil, fail500("VM %d is running - destroy failed", v.id)
	}
	if l := v.lock(); l != "" {
		return nil, fail500("VM is locked (%s)", l)
	}
	return s.startTask("qmdestroy", strconv.Itoa(v.id), c.user, v, "destroyed", func() ([]string, error) {
		if s.st.vms[v.id] != v {
			//lint:ignore ST1005 the simulator answers with PVE's own message, verbatim
			return nil, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", s.st.node, v.id)
		}
		delete(s.st.vms, v.id) // also drops pool membership, firewall config and snapshots
		lines := []string{fmt.Sprintf("Removing image: 100%% complete...done.")}
		if c.boolean("purge") {
			lines = append(lines, fmt.Sprintf("purging VM %d from related configurations..", v.id))
		}
		return lines, nil
	}), nil
}

func (s *Server) vmTemplate(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	if len(v.snaps) > 0 {
		return nil, fail500("unable to create template, because VM contains snapshots")
	}
	if v.isTemplate() {
		return nil, fail500("you can't convert a template to a template")
	}
	if v.running {
		return nil, fail500("you can't convert a VM to template if VM is running")
	}
	return s.startTask("qmtemplate", strconv.Itoa(v.id), c.user, v, "create", func() ([]string, error) {
		v.conf["template"] = 1
		return nil, nil
	}), nil
}

func (s *Server) firewallGet(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	return cloneConf(v.fw), nil
}

func (s *Server) firewallPut(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	for k, val := range c.params {
		switch k {
		case "digest":
		case "delete":
			for _, d := range strings.Split(c.str("delete"), ",") {
				delete(v.fw, strings.TrimSpace(d))
			}
		default:
			v.fw[k] = storeKey(k, val)
		}
	}
	return nil, nil
}

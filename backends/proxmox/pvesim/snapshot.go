package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (s *Server) snapshotList(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(v.snaps))
	for n := range v.snaps {
		names = append(names, n)
	}
	sort.Strings(names) // PVE returns hash order; clients must sort by snaptime or parent chain
	out := []map[string]any{}
	for _, n := range names {
		sn := v.snaps[n]
		e := map[string]any{"name": sn.name, "snaptime": sn.snaptime, "description": sn.desc}
		if sn.vmstate {
			e["vmstate"] = 1
		} else {
			e["vmstate"] = 0
		}
		if sn.parent != "" {
			e["parent"] = sn.parent
		}
		out = append(out, e)
	}
	cur := map[string]any{"name": "current", "digest": v.digest(), "running": 0, "description": "You are here!"}
	if v.running {
		cur["running"] = 1
	}
	if p, ok := v.conf["parent"].(string); ok && p != "" {
		cur["parent"] = p
	}
	return append(out, cur), nil
}

func (s *Server) snapshotCreate(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	name := c.str("snapname")
	if !configIDRE.MatchString(name) || len(name) > 40 {
		return nil, paramErr(map[string]string{"snapname": fmt.Sprintf("invalid format - invalid configuration ID '%s'", name)})
	}
	if name == "current" || name == "pending" {
		return nil, paramErr(map[string]string{"snapname": fmt.Sprintf("invalid format - invalid configuration ID '%s'", name)})
	}
	withRAM := c.boolean("vmstate")
	if withRAM {
		for k := range v.conf {
			if strings.HasPrefix(k, "virtiofs") || k == "amd-sev" || k == "intel-tdx" {
				return nil, fail500("Cannot live-migrate, snapshot (with RAM), or hibernate a VM with: %s", strings.TrimRight(k, "0123456789"))
			}
		}
	}
	desc := c.str("description")
	return s.startTask("qmsnapshot", strconv.Itoa(v.id), c.user, v, "snapshot", func() ([]string, error) {
		if v.isTemplate() {
			return nil, fmt.Errorf("you can't take a snapshot if it's a template")
		}
		if _, used := v.snaps[name]; used {
			return nil, fmt.Errorf("snapshot name '%s' already used", name)
		}
		if v.agentEnabled() && v.running && v.agent.up() && v.agent.FreezeHangs {
			return nil, fmt.Errorf("guest-fsfreeze-freeze timed out")
		}
		parent, _ := v.conf["parent"].(string)
		conf := cloneConf(v.conf)
		delete(conf, "lock")
		sn := &snapshot{name: name, desc: desc, snaptime: time.Now().Unix(), vmstate: withRAM && v.running,
			parent: parent, conf: conf, running: v.running, files: cloneFiles(v.agent.Files)}
		v.snaps[name] = sn
		v.conf["parent"] = name
		lines := []string{fmt.Sprintf("snapshotting 'drive-scsi0' (local-lvm:vm-%d-disk-0)", v.id)}
		if sn.vmstate {
			lines = append([]string{"saving VM state and RAM using storage 'local-lvm'"}, lines...)
		}
		return lines, nil
	}), nil
}

func (s *Server) snapshotRollback(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	name := c.vars["snapname"]
	start := c.boolean("start")
	return s.startTask("qmrollback", strconv.Itoa(v.id), c.user, nil, "", func() ([]string, error) {
		if v.isTemplate() {
			return nil, fmt.Errorf("you can't rollback if vm is a template")
		}
		sn, ok := v.snaps[name]
		if !ok {
			return nil, fmt.Errorf("snapshot '%s' does not exist", name)
		}
		if l := v.lock(); l != "" {
			return nil, fmt.Errorf("VM is locked (%s)", l)
		}
		var lines []string
		if v.running {
			lines = append(lines, "stopping VM")
			v.running = false
			v.agent.reset()
		}
		v.conf = cloneConf(sn.conf)
		v.conf["parent"] = name
		v.agent.Files = cloneFiles(sn.files)
		if (sn.vmstate && sn.running) || start {
			v.running, v.started = true, time.Now()
			lines = append(lines, "VM is running after rollback")
		}
		return lines, nil
	}), nil
}

func (s *Server) snapshotDelete(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.loadVM(c)
	if err != nil {
		return nil, err
	}
	name := c.vars["snapname"]
	return s.startTask("qmdelsnapshot", strconv.Itoa(v.id), c.user, v, "snapshot-delete", func() ([]string, error) {
		sn, ok := v.snaps[name]
		if !ok {
			return nil, fmt.Errorf("snapshot '%s' does not exist", name)
		}
		for _, other := range v.snaps { // children now hang off the deleted snapshot's parent
			if other.parent == name {
				other.parent = sn.parent
			}
		}
		if p, _ := v.conf["parent"].(string); p == name {
			if sn.parent != "" {
				v.conf["parent"] = sn.parent
			} else {
				delete(v.conf, "parent")
			}
		}
		delete(v.snaps, name)
		return nil, nil
	}), nil
}

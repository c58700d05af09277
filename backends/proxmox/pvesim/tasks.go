package pvesim

import (
	"fmt"
	"strings"
	"time"
)

// task is one PVE worker. Its UPID has PVE's exact format and it logs lines ending in
// "TASK OK" or "TASK ERROR: <msg>".
type task struct {
	upid, typ, id, user string
	pid, pstart         uint32
	start, end          time.Time
	running             bool
	exit                string
	log                 []string
}

// worker does a task's work under Server.mu; it returns log lines and the error that fails it.
type worker func() ([]string, error)

// startTask registers a running task and completes it after TaskDelay. If lockVM is set, the
// VM gets lock lockName for the task's duration (the window other operations see), and a VM
// already locked fails the task as PVE's check_lock does. Callers hold s.mu.
func (s *Server) startTask(typ, id, user string, lockVM *vm, lockName string, w worker) string {
	st := s.st
	now := time.Now()
	t := &task{typ: typ, id: id, user: user, pid: st.allocPID(), pstart: uint32(now.UnixNano()/1e7) & 0x7fffffff, start: now, running: true}
	t.upid = fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", st.node, t.pid, t.pstart, now.Unix(), typ, id, user)
	st.tasks = append(st.tasks, t)
	st.byUPID[t.upid] = t
	if len(st.tasks) > 2000 { // keep the index bounded like PVE's task archive rotation
		old := st.tasks[0]
		st.tasks = st.tasks[1:]
		delete(st.byUPID, old.upid)
	}
	var lockErr error
	ownLock := false
	if lockVM != nil && lockName != "" {
		if l := lockVM.lock(); l != "" {
			lockErr = fmt.Errorf("VM is locked (%s)", l)
		} else {
			lockVM.conf["lock"] = lockName
			ownLock = true
		}
	}
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		select {
		case <-time.After(s.opts.TaskDelay):
		case <-s.done:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if ownLock && lockVM.lock() == lockName {
			delete(lockVM.conf, "lock")
		}
		var lines []string
		err := lockErr
		if err == nil {
			lines, err = w()
		}
		t.log = append(t.log, lines...)
		t.running = false
		t.end = time.Now()
		if err != nil {
			msg := strings.TrimRight(err.Error(), "\n")
			t.log = append(t.log, "TASK ERROR: "+msg)
			t.exit = msg
		} else {
			t.log = append(t.log, "TASK OK")
			t.exit = "OK"
		}
	}()
	return t.upid
}

// splitUser separates "user@realm!token" into user and token id, as PVE's task status does.
func splitUser(u string) (user, tokenid string) {
	user, tokenid, _ = strings.Cut(u, "!")
	return user, tokenid
}

func (t *task) status(node string) map[string]any {
	user, tok := splitUser(t.user)
	m := map[string]any{
		"upid": t.upid, "node": node, "pid": t.pid, "pstart": t.pstart, "starttime": t.start.Unix(),
		"type": t.typ, "id": t.id, "user": user, "status": "running",
	}
	if tok != "" {
		m["tokenid"] = tok
	}
	if !t.running {
		m["status"] = "stopped"
		m["exitstatus"] = t.exit
	}
	return m
}

// listEntry is the node/cluster task index form: status is the exit status, RUNNING while active.
func (t *task) listEntry(node string) map[string]any {
	user, tok := splitUser(t.user)
	m := map[string]any{
		"upid": t.upid, "node": node, "pid": t.pid, "pstart": t.pstart, "starttime": t.start.Unix(),
		"type": t.typ, "id": t.id, "user": user, "status": "RUNNING",
	}
	if tok != "" {
		m["tokenid"] = tok
	}
	if !t.running {
		m["status"] = t.exit
		m["endtime"] = t.end.Unix()
	}
	return m
}

func (s *Server) taskStatus(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(c); err != nil {
		return nil, err
	}
	t, err := s.findTask(c.vars["upid"])
	if err != nil {
		return nil, err
	}
	return t.status(s.st.node), nil
}

func (s *Server) findTask(upid string) (*task, error) {
	if !upidRE.MatchString(upid) {
		return nil, paramErr(map[string]string{"upid": "unable to parse worker upid '" + upid + "'"})
	}
	t, ok := s.st.byUPID[upid]
	if !ok {
		return nil, paramErr(map[string]string{"upid": "no such task"})
	}
	return t, nil
}

func (s *Server) taskLog(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(c); err != nil {
		return nil, err
	}
	t, err := s.findTask(c.vars["upid"])
	if err != nil {
		return nil, err
	}
	start, limit := c.integer("start", 0), c.integer("limit", 50)
	out := []map[string]any{}
	for i := start; i < len(t.log) && len(out) < limit; i++ {
		out = append(out, map[string]any{"n": i + 1, "t": t.log[i]})
	}
	return withTotal{data: out, total: len(t.log)}, nil
}

func (s *Server) taskStop(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.findTask(c.vars["upid"])
	if err != nil {
		return nil, err
	}
	if t.running {
		t.running, t.end, t.exit = false, time.Now(), "interrupted by signal"
		t.log = append(t.log, "TASK ERROR: interrupted by signal")
	}
	return nil, nil
}

func (s *Server) nodeTasks(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(c); err != nil {
		return nil, err
	}
	vmid, typ, since := c.str("vmid"), c.str("typefilter"), int64(c.integer("since", 0))
	source := c.str("source")
	limit := c.integer("limit", 50)
	out := []map[string]any{}
	for i := len(s.st.tasks) - 1; i >= 0 && len(out) < limit; i-- {
		t := s.st.tasks[i]
		if (vmid != "" && t.id != vmid) || (typ != "" && t.typ != typ) || t.start.Unix() < since {
			continue
		}
		if (source == "" || source == "archive") && t.running {
			continue
		}
		if source == "active" && !t.running {
			continue
		}
		out = append(out, t.listEntry(s.st.node))
	}
	return withTotal{data: out, total: len(out)}, nil
}

func (s *Server) clusterTasks(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for i := len(s.st.tasks) - 1; i >= 0 && len(out) < 50; i-- {
		e := s.st.tasks[i].listEntry(s.st.node)
		e["saved"] = "1"
		if s.st.tasks[i].running {
			e["saved"] = "0"
			delete(e, "status")
		}
		out = append(out, e)
	}
	return out, nil
}

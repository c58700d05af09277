package pvesim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type answer struct {
	status int
	Data   json.RawMessage   `json:"data"`
	Msg    string            `json:"message"`
	Errs   map[string]string `json:"errors"`
}

// do sends one request with the token (or the given headers) and decodes PVE's envelope.
func do(t *testing.T, s *Server, method, path, ctype, body string, hdr map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, s.URL()+path, rd)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if hdr == nil {
		hdr = map[string]string{"Authorization": "PVEAPIToken=" + s.TokenID() + "=" + s.TokenSecret()}
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode}
	raw, _ := io.ReadAll(res.Body)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s %s: body %q", method, path, raw)
		}
	}
	return a
}

func waitTask(t *testing.T, s *Server, upidJSON json.RawMessage) map[string]any {
	t.Helper()
	var upid string
	if err := json.Unmarshal(upidJSON, &upid); err != nil || !upidRE.MatchString(upid) {
		t.Fatalf("not a UPID: %s", upidJSON)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		a := do(t, s, "GET", "/nodes/pve/tasks/"+upid+"/status", "", "", nil)
		var st map[string]any
		_ = json.Unmarshal(a.Data, &st)
		if st["status"] == "stopped" {
			return st
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("task %s never stopped", upid)
	return nil
}

func demo(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.TaskDelay == 0 {
		opts.TaskDelay = time.Millisecond
	}
	s, err := StartDemo(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestWireProtocol(t *testing.T) {
	s := demo(t, Options{})
	for _, tc := range []struct {
		name, method, path, ctype, body string
		status                          int
		check                           func(answer) bool
	}{
		{"trailing slash ignored", "GET", "/pools/", "", "", 200, nil},
		{"unknown route", "GET", "/nodes/pve/lxc", "", "", 501, func(a answer) bool { return a.Msg == "Method 'GET /nodes/pve/lxc' not implemented\n" }},
		{"wrong method", "PUT", "/version", "application/json", "{}", 501, nil},
		{"form-encoded delete (Inspect's NIC removal)", "PUT", "/nodes/pve/qemu/121/config", "application/x-www-form-urlencoded", "delete=net0", 200, nil},
		{"string true is not a boolean", "POST", "/nodes/pve/qemu/121/snapshot", "application/json", `{"snapname":"ab","vmstate":"true"}`, 400,
			func(a answer) bool {
				return strings.Contains(a.Errs["vmstate"], "type check ('boolean') failed - got 'true'")
			}},
		{"missing required", "POST", "/nodes/pve/qemu/121/clone", "application/json", `{}`, 400,
			func(a answer) bool { return a.Errs["newid"] == "property is missing and it is not optional" }},
		{"unsupported content type", "POST", "/nodes/pve/qemu/121/snapshot", "text/plain", "snapname=x", 506, nil},
		{"body on GET", "GET", "/version", "application/json", "{}", 501, nil},
		{"bad vmid", "GET", "/nodes/pve/qemu/abc/config", "", "", 400, func(a answer) bool { return a.Errs["vmid"] != "" }},
		{"unknown node", "GET", "/nodes/other/qemu", "", "", 500, nil},
		{"reserved snapshot name", "POST", "/nodes/pve/qemu/121/snapshot", "application/json", `{"snapname":"current"}`, 400, nil},
		{"file-write cap", "POST", "/nodes/pve/qemu/121/agent/file-write", "application/json", `{"file":"/x","content":"` + strings.Repeat("a", 61441) + `"}`, 400,
			func(a answer) bool { return strings.Contains(a.Errs["content"], "61440") }},
		{"agent on a VM without agent", "POST", "/nodes/pve/qemu/112/agent/ping", "", "", 500, func(a answer) bool { return a.Msg == "No QEMU guest agent configured\n" }},
		{"agent on a stopped VM", "POST", "/nodes/pve/qemu/122/agent/ping", "", "", 500, nil},
		{"destroy protected", "DELETE", "/nodes/pve/qemu/9000", "", "", 500, func(a answer) bool { return strings.Contains(a.Msg, "protection mode enabled") }},
		{"template with snapshots refused later; running VM now", "POST", "/nodes/pve/qemu/121/template", "", "", 500, nil},
		{"linked clone of a non-template", "POST", "/nodes/pve/qemu/121/clone", "application/json", `{"newid":500,"full":0}`, 500, nil},
		{"vnet with subnets", "DELETE", "/cluster/sdn/vnets/cyb001v0", "", "", 400, func(a answer) bool { return a.Errs["vnet"] == "Can't delete vnet if subnets exists" }},
		{"zone in use", "DELETE", "/cluster/sdn/zones/cyb001z", "", "", 500, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, s, tc.method, tc.path, tc.ctype, tc.body, nil)
			if a.status != tc.status || (tc.check != nil && !tc.check(a)) {
				t.Errorf("status %d msg %q errors %v", a.status, a.Msg, a.Errs)
			}
		})
	}
}

func TestTicketAndCSRF(t *testing.T) {
	s := demo(t, Options{Password: "pw"})
	form := url.Values{"username": {"root@pam"}, "password": {"pw"}}.Encode()
	a := do(t, s, "POST", "/access/ticket", "application/x-www-form-urlencoded", form, map[string]string{})
	var sess struct {
		Ticket string `json:"ticket"`
		CSRF   string `json:"CSRFPreventionToken"`
	}
	if a.status != 200 || json.Unmarshal(a.Data, &sess) != nil || !strings.HasPrefix(sess.Ticket, "PVE:root@pam:") {
		t.Fatalf("ticket: %d %s", a.status, a.Data)
	}
	cookie := map[string]string{"Cookie": "PVEAuthCookie=" + sess.Ticket}
	if a := do(t, s, "GET", "/version", "", "", cookie); a.status != 200 {
		t.Errorf("GET with ticket: %d", a.status)
	}
	if a := do(t, s, "POST", "/nodes/pve/qemu/121/status/stop", "", "", cookie); a.status != 401 {
		t.Errorf("POST without CSRF token: %d, want 401", a.status)
	}
	cookie["CSRFPreventionToken"] = sess.CSRF
	if a := do(t, s, "POST", "/nodes/pve/qemu/121/status/stop", "", "", cookie); a.status != 200 {
		t.Errorf("POST with CSRF token: %d %s", a.status, a.Msg)
	}
	cookie["Cookie"] = "PVEAuthCookie=" + strings.Replace(sess.Ticket, "root@pam", "admin@pam", 1)
	if a := do(t, s, "GET", "/version", "", "", cookie); a.status != 401 {
		t.Errorf("forged ticket: %d", a.status)
	}
	bad := url.Values{"username": {"root@pam"}, "password": {"nope"}}.Encode()
	if a := do(t, s, "POST", "/access/ticket", "application/x-www-form-urlencoded", bad, map[string]string{}); a.status != 401 {
		t.Errorf("wrong password: %d", a.status)
	}
}

func TestSnapshotSemantics(t *testing.T) {
	s := demo(t, Options{})
	js := "application/json"
	snap := func(name string, ram bool) map[string]any {
		body := `{"snapname":"` + name + `"}`
		if ram {
			body = `{"snapname":"` + name + `","vmstate":1}`
		}
		a := do(t, s, "POST", "/nodes/pve/qemu/121/snapshot", js, body, nil)
		if a.status != 200 {
			t.Fatalf("snapshot %s: %d %s", name, a.status, a.Msg)
		}
		return waitTask(t, s, a.Data)
	}
	snap("first", false)
	snap("second", true)
	if st := snap("second", false); st["exitstatus"] != "snapshot name 'second' already used" {
		t.Errorf("duplicate: %v", st["exitstatus"])
	}
	var list []map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/121/snapshot", "", "", nil).Data, &list)
	parents := map[string]any{}
	for _, e := range list {
		parents[e["name"].(string)] = e["parent"]
	}
	if parents["second"] != "first" || parents["current"] != "second" || parents["first"] != nil {
		t.Errorf("parent chain %v", parents)
	}
	// Stop, roll back to the RAM snapshot: the VM comes back running.
	waitTask(t, s, do(t, s, "POST", "/nodes/pve/qemu/121/status/stop", "", "", nil).Data)
	waitTask(t, s, do(t, s, "POST", "/nodes/pve/qemu/121/snapshot/second/rollback", "", "", nil).Data)
	var cur map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/121/status/current", "", "", nil).Data, &cur)
	if cur["status"] != "running" {
		t.Errorf("after vmstate rollback: %v", cur["status"])
	}
	// Rollback to the disk-only snapshot stops the VM unless start=1.
	waitTask(t, s, do(t, s, "POST", "/nodes/pve/qemu/121/snapshot/first/rollback", "", "", nil).Data)
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/121/status/current", "", "", nil).Data, &cur)
	if cur["status"] != "stopped" {
		t.Errorf("after disk rollback: %v", cur["status"])
	}
	st := waitTask(t, s, do(t, s, "POST", "/nodes/pve/qemu/121/snapshot/nope/rollback", "", "", nil).Data)
	if st["exitstatus"] != "snapshot 'nope' does not exist" {
		t.Errorf("rollback to unknown: %v", st["exitstatus"])
	}
	// Deleting "first" re-parents "second".
	waitTask(t, s, do(t, s, "DELETE", "/nodes/pve/qemu/121/snapshot/first", "", "", nil).Data)
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/121/snapshot", "", "", nil).Data, &list)
	for _, e := range list {
		if e["name"] == "second" && e["parent"] != nil {
			t.Errorf("second still has parent %v", e["parent"])
		}
	}
	var tasks []map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/tasks?source=all&vmid=121&typefilter=qmsnapshot", "", "", nil).Data, &tasks)
	if len(tasks) != 3 || tasks[0]["endtime"] == nil {
		t.Errorf("task history: %v", tasks)
	}
}

func TestCloneCopiesConfigWithNewMACs(t *testing.T) {
	s := demo(t, Options{TaskDelay: 300 * time.Millisecond}) // long enough to observe the clone lock
	a := do(t, s, "POST", "/nodes/pve/qemu/101/clone", "application/json", `{"newid":600,"full":1,"name":"copy"}`, nil)
	if a.status != 200 {
		t.Fatalf("clone: %d %s", a.status, a.Msg)
	}
	var upid string
	_ = json.Unmarshal(a.Data, &upid)
	if !strings.Contains(upid, ":qmclone:101:") {
		t.Errorf("clone UPID id must be the source vmid: %s", upid)
	}
	var during map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/600/config", "", "", nil).Data, &during)
	waitTask(t, s, a.Data)
	var src, dst map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/101/config", "", "", nil).Data, &src)
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/qemu/600/config", "", "", nil).Data, &dst)
	if during["lock"] != "clone" || dst["lock"] != nil {
		t.Errorf("lock during clone %v, after %v", during["lock"], dst["lock"])
	}
	if dst["cpu"] != src["cpu"] || dst["tags"] != src["tags"] || dst["name"] != "copy" {
		t.Errorf("clone config %v", dst)
	}
	if dst["net0"] == src["net0"] || !strings.Contains(dst["net0"].(string), "bridge=cyb001v0") {
		t.Errorf("clone NIC %v vs %v: want a new MAC on the same bridge", dst["net0"], src["net0"])
	}
	if a := do(t, s, "POST", "/nodes/pve/qemu/101/clone", "application/json", `{"newid":600,"full":1}`, nil); a.status != 500 ||
		a.Msg != "unable to create VM 600: config file already exists\n" {
		t.Errorf("clone onto existing id: %d %q", a.status, a.Msg)
	}
}

func TestFaultInjection(t *testing.T) {
	s := demo(t, Options{})
	s.SetFaults(Faults{ErrorRate: 0.5, Seed: 7})
	fails := 0
	for i := 0; i < 200; i++ {
		if a := do(t, s, "GET", "/version", "", "", nil); a.status == 500 {
			fails++
			if a.Msg != "pvesim: injected fault\n" {
				t.Fatalf("injected error shape: %q", a.Msg)
			}
		}
	}
	if fails < 70 || fails > 130 {
		t.Errorf("%d/200 failures at rate 0.5", fails)
	}
	s.SetFaults(Faults{DropRate: 1, Seed: 8})
	req, _ := http.NewRequest("GET", s.URL()+"/version", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+s.TokenID()+"="+s.TokenSecret())
	if res, err := s.HTTPClient().Do(req); err == nil {
		res.Body.Close()
		t.Error("dropped connection answered")
	}
	s.SetFaults(Faults{Latency: 30 * time.Millisecond})
	start := time.Now()
	do(t, s, "GET", "/version", "", "", nil)
	if time.Since(start) < 30*time.Millisecond {
		t.Error("latency not applied")
	}
}

// PVE lists an active task with status "RUNNING" and no endtime (go-proxmox pitfall §1.5.4).
func TestActiveTaskListing(t *testing.T) {
	s := Start(Options{TaskDelay: 5 * time.Second}) // Close ends the task early
	defer s.Close()
	if err := SeedDemo(s); err != nil {
		t.Fatal(err)
	}
	a := do(t, s, "POST", "/nodes/pve/qemu/122/status/start", "", "", nil)
	var tasks []map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/tasks?source=active", "", "", nil).Data, &tasks)
	if len(tasks) != 1 || tasks[0]["status"] != "RUNNING" || tasks[0]["endtime"] != nil {
		t.Fatalf("active tasks %v", tasks)
	}
	var st map[string]any
	_ = json.Unmarshal(do(t, s, "GET", "/nodes/pve/tasks/"+strings.Trim(string(a.Data), `"`)+"/status", "", "", nil).Data, &st)
	if st["status"] != "running" || st["exitstatus"] != nil {
		t.Fatalf("running status %v", st)
	}
	if a := do(t, s, "GET", "/nodes/pve/tasks/UPID:pve:1:2:3:x:y:z:/status", "", "", nil); a.status != 400 || a.Errs["upid"] == "" {
		t.Errorf("unparsable upid: %d %v", a.status, a.Errs)
	}
}

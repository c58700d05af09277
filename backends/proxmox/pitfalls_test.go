package proxmox

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

// rawData fetches a route's "data" member as raw JSON, bypassing go-proxmox's decoding.
func rawData(t *testing.T, sim *pvesim.Server, path string) map[string]json.RawMessage {
	t.Helper()
	req, _ := http.NewRequest("GET", sim.URL()+path, nil)
	req.Header.Set("Authorization", "PVEAPIToken="+sim.TokenID()+"="+sim.TokenSecret())
	res, err := sim.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct{ Data json.RawMessage }
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(env.Data, &m); err != nil {
		var arr []map[string]json.RawMessage
		if err := json.Unmarshal(env.Data, &arr); err != nil || len(arr) == 0 {
			t.Fatalf("%s: data %s", path, env.Data)
		}
		return arr[0]
	}
	return m
}

// proxmox-api.md §1.4: each decoding constraint, checked on the wire and through go-proxmox.
func TestDecodingPitfalls(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	c := b.client
	ctx := ctxT(t)
	node := c.NodeRef("pve")

	t.Run("IntOrBool config booleans are numbers", func(t *testing.T) {
		raw := rawData(t, sim, "/nodes/pve/qemu/9000/config")
		if string(raw["protection"]) != "1" || string(raw["template"]) != "1" {
			t.Fatalf("protection=%s template=%s, want bare 1", raw["protection"], raw["template"])
		}
		vm, err := node.VirtualMachine(ctx, 9000)
		if err != nil || !bool(vm.VirtualMachineConfig.Protection) || !bool(vm.VirtualMachineConfig.Template) {
			t.Fatalf("decoded config: %+v %v", vm, err)
		}
	})
	t.Run("IsTemplate key omitted for non-templates", func(t *testing.T) {
		for _, path := range []string{"/nodes/pve/qemu/101/status/current"} {
			if _, ok := rawData(t, sim, path)["template"]; ok {
				t.Fatalf("%s sends template for a non-template (IsTemplate decodes any value as true)", path)
			}
		}
		vms, err := node.VirtualMachines(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vms {
			if bool(v.Template) != (v.VMID == 9000) {
				t.Errorf("VM %d decoded Template=%v", v.VMID, v.Template)
			}
		}
	})
	t.Run("ClusterResource template is a 0/1 number", func(t *testing.T) {
		if got := string(rawData(t, sim, "/cluster/resources?type=vm")["template"]); got != "0" {
			t.Fatalf("template = %s, want 0", got)
		}
		rs, err := (&pve.Cluster{}).New(c).Resources(ctx, "vm")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if (r.Template == 1) != (r.VMID == 9000) {
				t.Errorf("VM %d Template=%d", r.VMID, r.Template)
			}
		}
	})
	t.Run("memory is a property string", func(t *testing.T) {
		if got := string(rawData(t, sim, "/nodes/pve/qemu/101/config")["memory"]); got != `"2048"` {
			t.Fatalf("memory = %s", got)
		}
		vm, err := node.VirtualMachine(ctx, 101)
		if err != nil || vm.VirtualMachineConfig.Memory != 2048 {
			t.Fatalf("decoded memory: %v", err)
		}
	})
	t.Run("cluster status uses numbers (Cluster.UnmarshalJSON asserts float64)", func(t *testing.T) {
		cl, err := c.Cluster(ctx)
		if err != nil || cl.Quorate != 1 || len(cl.Nodes) != 1 || cl.Nodes[0].Online != 1 {
			t.Fatalf("cluster: %+v %v", cl, err)
		}
	})
	t.Run("task starttime is a number and status carries exitstatus", func(t *testing.T) {
		vm := node.VirtualMachineRef(101)
		task, err := vm.Stop(ctx)
		if err != nil || task == nil {
			t.Fatalf("stop: %v", err)
		}
		if err := task.Wait(ctx, 5*time.Millisecond, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if task.StartTime.IsZero() || task.ExitStatus != "OK" || task.PID == 0 || task.User != "rangekeeper@pve" {
			t.Fatalf("task: %+v", task)
		}
		// A real UPID has 9 ':'-separated fields (NewTask panics on 7).
		if n := strings.Count(string(task.UPID), ":"); n != 8 || !strings.HasSuffix(string(task.UPID), ":") {
			t.Fatalf("UPID %s", task.UPID)
		}
	})
	t.Run("exec-status flags are integers", func(t *testing.T) {
		vm := node.VirtualMachineRef(111)
		pid, err := vm.AgentExec(ctx, []string{"id"}, "")
		if err != nil {
			t.Fatal(err)
		}
		st, err := vm.WaitForAgentExecExit(ctx, pid, 2)
		if err != nil || st.Exited != 1 || !strings.HasPrefix(st.OutData, "uid=0") {
			t.Fatalf("status %+v %v", st, err)
		}
	})
	t.Run("nextid is a string", func(t *testing.T) {
		raw := rawDataAny(t, sim, "/cluster/nextid")
		if raw != `"100"` {
			t.Fatalf("nextid data = %s, want \"100\"", raw)
		}
		id, err := (&pve.Cluster{}).New(c).NextID(ctx)
		if err != nil || id != 100 {
			t.Fatalf("NextID = %d %v", id, err)
		}
		var taken map[string]any
		err = c.Get(ctx, "/cluster/nextid?vmid=101", &taken)
		var ae *pve.APIError
		if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Errors["vmid"], "already exists") {
			t.Fatalf("taken vmid: %v", err)
		}
	})
	t.Run("async endpoints never answer a null UPID", func(t *testing.T) {
		vm := node.VirtualMachineRef(111)
		task, err := vm.Config(ctx, pve.VirtualMachineOption{Name: "description", Value: "x"})
		if err != nil || task == nil {
			t.Fatalf("config task %v %v", task, err)
		}
	})
	t.Run("FirewallOptionGet is broken, the raw read is not", func(t *testing.T) {
		vm := node.VirtualMachineRef(111)
		opts, err := vm.FirewallOptionGet(ctx)
		if err != nil || opts != nil {
			t.Logf("go-proxmox FirewallOptionGet now returns %+v, %v (pitfall §1.5.1 fixed upstream?)", opts, err)
		}
		var raw map[string]any
		if err := c.Get(ctx, "/nodes/pve/qemu/111/firewall/options", &raw); err != nil || raw["policy_out"] != "DROP" || raw["enable"] != float64(1) {
			t.Fatalf("raw firewall options %v %v", raw, err)
		}
	})
	t.Run("tags are normalised by PVE, not by go-proxmox", func(t *testing.T) {
		vm, err := node.VirtualMachine(ctx, 121)
		if err != nil {
			t.Fatal(err)
		}
		task, err := vm.AddTag(ctx, "Zeta")
		if err != nil || task.Wait(ctx, 5*time.Millisecond, 5*time.Second) != nil {
			t.Fatal(err)
		}
		if err := vm.Ping(ctx); err != nil || vm.Tags != "inspect;web;zeta" {
			t.Fatalf("tags = %q %v", vm.Tags, err)
		}
	})
}

func rawDataAny(t *testing.T, sim *pvesim.Server, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", sim.URL()+path, nil)
	req.Header.Set("Authorization", "PVEAPIToken="+sim.TokenID()+"="+sim.TokenSecret())
	res, err := sim.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct{ Data json.RawMessage }
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	return string(env.Data)
}

// File transfer pitfalls: the 61,440-character write cap and decode=1's Latin-1 content.
func TestAgentFilePitfalls(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	vm := b.client.NodeRef("pve").VirtualMachineRef(101)
	if err := vm.AgentFileWrite(ctx, "/tmp/max", make([]byte, chunkRaw)); err != nil {
		t.Fatalf("a %d-byte write (61,440 base64 characters) must fit: %v", chunkRaw, err)
	}
	err := vm.AgentFileWrite(ctx, "/tmp/over", make([]byte, chunkRaw+1))
	if !pve.IsBadRequest(err) {
		t.Fatalf("a %d-byte write must be refused with 400: %v", chunkRaw+1, err)
	}
	bin := []byte{0x00, 0x7f, 0x80, 0xc3, 0xff, 'A'}
	if err := vm.AgentFileWrite(ctx, "/tmp/bin", bin); err != nil {
		t.Fatal(err)
	}
	fr, err := vm.AgentFileRead(ctx, "/tmp/bin") // decode=1: bytes as Latin-1 code points
	if err != nil {
		t.Fatal(err)
	}
	if fr.Content == string(bin) {
		t.Fatal("decode=1 content equals the raw bytes; the simulator does not model Latin-1")
	}
	got, err := latin1Bytes(fr.Content)
	if err != nil || string(got) != string(bin) {
		t.Fatalf("Latin-1 recovery = %v %v", got, err)
	}
	back, err := b.CopyFrom(ctx, "pve:lab/cyb001z", "default", "/tmp/bin") // count/offset/decode=0
	if err != nil || string(back) != string(bin) {
		t.Fatalf("CopyFrom = %v %v", back, err)
	}
}

// PVE's error shapes as go-proxmox classifies them.
func TestErrorShapes(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	c := b.client

	_, err := c.NodeRef("pve").VirtualMachine(ctx, 999)
	var ae *pve.APIError
	if !pve.IsNotFound(err) || !errors.As(err, &ae) || ae.StatusCode != 500 || !strings.Contains(ae.Message, "does not exist") {
		t.Errorf("missing VM: %v", err)
	}
	err = c.Post(ctx, "/nodes/pve/qemu/101/snapshot", map[string]any{"snapname": "bad name", "bogus": 1}, nil)
	if !pve.IsBadRequest(err) || !errors.As(err, &ae) || ae.Errors["bogus"] == "" || ae.Errors["snapname"] == "" || !strings.HasPrefix(ae.Message, "Parameter verification failed.") {
		t.Errorf("validation: %#v", err)
	}
	err = c.Get(ctx, "/nodes/pve/nonsense", nil)
	if !errors.As(err, &ae) || ae.StatusCode != 501 || !strings.Contains(ae.Message, "not implemented") {
		t.Errorf("unknown route: %v", err)
	}
	bad := pve.NewClient(sim.URL(), pve.WithHTTPClient(sim.HTTPClient()), pve.WithAPIToken(sim.TokenID(), "wrong"))
	if _, err := bad.Version(ctx); !pve.IsNotAuthorized(err) || !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Errorf("wrong token: %v", err)
	}
	if err := c.Post(ctx, "/access/ticket", map[string]any{"username": "root@pam", "password": "x"}, nil); !errors.As(err, &ae) || ae.StatusCode != 403 {
		t.Errorf("ticket with a token: %v", err)
	}
	err = c.Post(ctx, "/nodes/pve/qemu/101/config", map[string]any{"args": "-S"}, nil)
	if !errors.As(err, &ae) || ae.StatusCode != 403 || !strings.Contains(ae.Message, "Permission check failed") {
		t.Errorf("root-only key as a token: %v", err)
	}
	err = c.Delete(ctx, "/nodes/pve/qemu/101", nil)
	if !errors.As(err, &ae) || ae.StatusCode != 500 || !strings.Contains(ae.Message, "is running - destroy failed") {
		t.Errorf("destroy running VM: %v", err)
	}
	// Worker-side failures: the task fails and its log ends in TASK ERROR.
	var upid pve.UPID
	if err := c.Post(ctx, "/nodes/pve/qemu/101/status/start", nil, &upid); err != nil {
		t.Fatal(err)
	}
	err = b.waitTask(ctx, upid, "start VM 101")
	var te *TaskError
	if !errors.As(err, &te) || te.Message != "VM 101 already running" {
		t.Errorf("start of a running VM: %v", err)
	}
	var log []map[string]any
	if err := c.Get(ctx, "/nodes/pve/tasks/"+string(upid)+"/log", &log); err != nil || log[len(log)-1]["t"] != "TASK ERROR: VM 101 already running" {
		t.Errorf("task log %v %v", log, err)
	}
	// Unauthenticated raw request: 401 with an empty body.
	res, err := sim.HTTPClient().Get(sim.URL() + "/version")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 401 || len(body) != 0 {
		t.Errorf("no auth: %d %q", res.StatusCode, body)
	}
	// A guest that stalls fs-freeze fails the snapshot task with a clear error.
	sim.WithAgent(111, func(a *pvesim.Agent) { a.FreezeHangs = true })
	_, err = b.Snapshot(ctx, "pve:lab/cyb002z", backends.SnapshotOptions{Name: "frozen"})
	if err == nil || !strings.Contains(err.Error(), "fsfreeze") {
		t.Errorf("stalled freeze: %v", err)
	}
}

// go-proxmox pitfalls §1.5.3/§1.5.5: a short or empty UPID must be an error, not a panic or a nil
// task dereference.
func TestWaitTaskRejectsMalformedUPIDs(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	for _, upid := range []pve.UPID{"", "UPID:pve:00000001:00000002:00000003:qmstart:100"} {
		if err := b.waitTask(ctx, upid, "start VM 100"); err == nil || !strings.Contains(err.Error(), "start VM 100") {
			t.Errorf("waitTask(%q) = %v", upid, err)
		}
	}
	err := b.waitTask(ctx, "UPID:pve:00000001:00000002:00000003:qmstart:100:root@pam:", "start VM 100")
	if err == nil || !strings.Contains(err.Error(), "no such task") {
		t.Errorf("unknown UPID: %v", err)
	}
}

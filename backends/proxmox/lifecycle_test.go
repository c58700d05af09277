package proxmox

import (
	"bytes"
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

func simClient(sim *pvesim.Server) *pve.Client {
	return pve.NewClient(sim.URL(), pve.WithHTTPClient(sim.HTTPClient()), pve.WithAPIToken(sim.TokenID(), sim.TokenSecret()))
}

// The unmodified go-proxmox client drives a whole Inspect-style lifecycle against the simulator:
// discover, clone from a template, snapshot, exec, write+read a file, rollback, teardown.
func TestGoProxmoxClientLifecycle(t *testing.T) {
	sim, err := pvesim.StartDemo(pvesim.Options{TLS: true, TaskDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	runClientLifecycle(t, sim)
}

func runClientLifecycle(t *testing.T, sim *pvesim.Server) {
	c := simClient(sim)
	ctx := ctxT(t)
	wait := func(what string, task *pve.Task, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if task == nil {
			t.Fatalf("%s: nil task (simulator returned no UPID)", what)
		}
		if err := task.Wait(ctx, 5*time.Millisecond, 5*time.Second); err != nil {
			t.Fatalf("%s: wait: %v", what, err)
		}
	}

	// Discover: cluster resources, then the template as Inspect finds it (tags + template flag).
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cl.Resources(ctx, "vm")
	if err != nil || len(rs) < 8 {
		t.Fatalf("resources: %d, %v", len(rs), err)
	}
	node := c.NodeRef(sim.Node())
	vms, err := node.VirtualMachines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl *pve.VirtualMachine
	for _, v := range vms {
		if bool(v.Template) && strings.Contains(";"+v.Tags+";", ";inspect;") {
			tmpl = v
		}
	}
	if tmpl == nil || int(tmpl.VMID) != 9000 {
		t.Fatalf("template not found among %d VMs", len(vms))
	}

	// Clone with NewID 0: go-proxmox reads /cluster/status and /cluster/nextid itself.
	tmplVM, err := node.VirtualMachine(ctx, 9000)
	if err != nil {
		t.Fatal(err)
	}
	newid, task, err := tmplVM.Clone(ctx, &pve.VirtualMachineCloneOptions{Name: "default"})
	wait("clone", task, err)
	if newid != 100 || task.ID != "9000" || task.Type != "qmclone" {
		t.Fatalf("clone: newid=%d task id=%s type=%s", newid, task.ID, task.Type)
	}
	vm, err := node.VirtualMachine(ctx, newid)
	if err != nil {
		t.Fatal(err)
	}
	if bool(vm.Template) || !bool(vm.VirtualMachineConfig.Protection) {
		t.Fatalf("clone: template=%v protection=%v (protection is copied into clones)", vm.Template, vm.VirtualMachineConfig.Protection)
	}
	task, err = vm.Config(ctx, pve.VirtualMachineOption{Name: "net0", Value: "virtio,bridge=cyb001v0,firewall=1"},
		pve.VirtualMachineOption{Name: "delete", Value: "protection"})
	wait("config", task, err)
	task, err = vm.AddTag(ctx, "Sample-7")
	wait("tag", task, err)
	task, err = vm.Start(ctx)
	wait("start", task, err)
	if err := vm.WaitForAgent(ctx, 5); err != nil {
		t.Fatalf("agent: %v", err)
	}

	task, err = vm.NewSnapshot(ctx, "clean")
	wait("snapshot", task, err)

	pid, err := vm.AgentExec(ctx, []string{"/bin/sh", "-c", "echo hello"}, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := vm.WaitForAgentExecExit(ctx, pid, 5)
	if err != nil || st.Exited != 1 || st.ExitCode != 0 || st.OutData != "hello\n" {
		t.Fatalf("exec: %+v %v", st, err)
	}

	if err := vm.AgentFileWrite(ctx, "/tmp/note", []byte("written by go-proxmox")); err != nil {
		t.Fatal(err)
	}
	fr, err := vm.AgentFileRead(ctx, "/tmp/note")
	if err != nil || fr.Content != "written by go-proxmox" {
		t.Fatalf("file-read: %+v %v", fr, err)
	}

	task, err = vm.Snapshot("clean").Rollback(ctx)
	wait("rollback", task, err)
	if err := vm.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if vm.Status != "stopped" {
		t.Fatalf("after rollback without vmstate the VM is %s, want stopped", vm.Status)
	}
	task, err = vm.Start(ctx)
	wait("start again", task, err)
	if _, err := vm.AgentFileRead(ctx, "/tmp/note"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("file written after the snapshot survived rollback: %v", err)
	}

	task, err = vm.Stop(ctx)
	wait("stop", task, err)
	task, err = vm.Delete(ctx, &pve.VirtualMachineDeleteOptions{Purge: true, DestroyUnreferencedDisks: true})
	wait("delete", task, err)
	if _, err := node.VirtualMachine(ctx, newid); !pve.IsNotFound(err) {
		t.Fatalf("VM still there after delete: %v", err)
	}
}

// The backend's own lifecycle on the demo's weak sample: snapshot with RAM, list, exec, a
// chunked binary write read back, revert with start, delete snapshot, teardown with SDN cleanup.
func TestBackendLifecycle(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	runBackendLifecycle(t, sim, b)
}

func runBackendLifecycle(t *testing.T, sim *pvesim.Server, b *Backend) {
	ctx := ctxT(t)
	const id = "pve:lab/cyb001z"

	info, err := b.Snapshot(ctx, id, backends.SnapshotOptions{Name: "before-run", WithMemory: true, Description: "clean"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Members) != 2 || info.Details["vmstate"] != "true" {
		t.Fatalf("snapshot info %+v", info)
	}
	if _, err := b.Snapshot(ctx, id, backends.SnapshotOptions{Name: "before-run"}); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("duplicate snapshot: %v (want the task log's error)", err)
	}
	snaps, err := b.Snapshots(ctx, id)
	if err != nil || len(snaps) != 1 || snaps[0].Name != "before-run" || len(snaps[0].Members) != 2 || snaps[0].Details["description"] != "clean" {
		t.Fatalf("snapshots = %+v, %v", snaps, err)
	}

	res, err := b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"cat", "/flag.txt"}})
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "rk{demo-flag}\n" {
		t.Fatalf("exec: %+v %v", res, err)
	}
	res, err = b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"cat", "/missing"}})
	if err != nil || res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "No such file") {
		t.Fatalf("failing exec: %+v %v", res, err)
	}

	payload := make([]byte, 3*chunkRaw+1234) // four file-writes, assembled with dd
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyTo(ctx, id, "default", "/opt/probe", payload, 0o755); err != nil {
		t.Fatal(err)
	}
	back, err := b.CopyFrom(ctx, id, "default", "/opt/probe")
	if err != nil || !bytes.Equal(back, payload) {
		t.Fatalf("read back %d bytes (err %v), want the %d written", len(back), err, len(payload))
	}
	sim.WithAgent(101, func(a *pvesim.Agent) {
		if _, left := a.Files["/opt/probe.rkpart"]; left {
			t.Error("chunk staging file left in the guest")
		}
	})

	if err := b.Revert(ctx, id, "before-run", backends.RevertOptions{Start: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CopyFrom(ctx, id, "default", "/opt/probe"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("file survived revert: %v", err)
	}
	if err := b.Revert(ctx, id, "nope", backends.RevertOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("revert to unknown snapshot: %v", err)
	}
	if err := b.DeleteSnapshot(ctx, id, "before-run"); err != nil {
		t.Fatal(err)
	}
	if snaps, _ := b.Snapshots(ctx, id); len(snaps) != 0 {
		t.Fatalf("snapshots after delete: %+v", snaps)
	}

	if err := b.Teardown(ctx, id, backends.TeardownOptions{}); err != nil {
		t.Fatal(err)
	}
	if sim.HasVM(101) || sim.HasVM(102) || sim.HasZone("cyb001z") || sim.HasVNet("cyb001v0") {
		t.Fatal("teardown left VMs or the sample's SDN behind")
	}
	if !sim.HasZone("cyb002z") || !sim.HasZone("inspvmz") {
		t.Fatal("teardown removed another sample's or Inspect's permanent zone")
	}
}

func TestTeardownRespectsProtectionAndSharedZones(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	sim.SetConfig(112, "protection", 1)
	err := b.Teardown(ctx, "pve:lab/cyb002z", backends.TeardownOptions{})
	if err == nil || !strings.Contains(err.Error(), "protection=1") || !strings.Contains(err.Error(), "VM 112 (target)") {
		t.Fatalf("teardown of a protected VM: %v", err)
	}
	if !sim.HasVM(111) || !sim.HasVM(112) {
		t.Fatal("refused teardown still destroyed a VM")
	}
	// A VM outside the sandbox (no inspect tag) still uses the zone's vnet: the zone stays.
	if _, err := sim.AddVM(pvesim.VMSpec{VMID: 300, Name: "observer", Config: map[string]any{"net0": "virtio,bridge=web003v0"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Teardown(ctx, "pve:lab/web003z", backends.TeardownOptions{}); err != nil {
		t.Fatal(err)
	}
	if sim.HasVM(121) || sim.HasVM(122) || !sim.HasZone("web003z") || !sim.HasVNet("web003v0") {
		t.Fatal("shared zone removed, or sample VMs left")
	}
}

func TestExecResultIsReadOnce(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	sim.WithAgent(111, func(a *pvesim.Agent) {
		a.Commands["slow job"] = pvesim.ExecResult{ExitCode: 3, Stdout: "done", Duration: 30 * time.Millisecond}
	})
	res, err := b.Exec(ctx, "pve:lab/cyb002z", backends.ExecRequest{Member: "111", Cmd: []string{"slow", "job"}})
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "done" {
		t.Fatalf("exec: %+v %v", res, err)
	}
	vm := b.client.NodeRef("pve").VirtualMachineRef(111)
	pid, err := vm.AgentExec(ctx, []string{"true"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vm.WaitForAgentExecExit(ctx, pid, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := vm.AgentExecStatus(ctx, pid); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("second exec-status read: %v", err)
	}
	res, err = b.Exec(context.Background(), "pve:lab/cyb002z", backends.ExecRequest{Member: "target", Cmd: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "no QEMU guest agent") {
		t.Fatalf("exec on VM without agent: %+v %v", res, err)
	}
}

// The probe issue's delivery path over the guest agent: chunked write, verify, run, collect,
// remove.
func TestProbeDeliveryOverGuestAgent(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	const id, probe, out = "pve:lab/cyb002z", "/tmp/rk-probe", "/tmp/rk-probe.json"
	sim.WithAgent(111, func(a *pvesim.Agent) {
		a.Handler = func(argv []string, stdin []byte, files map[string][]byte) pvesim.ExecResult {
			if argv[0] == probe { // the "probe" writes its report into the guest
				files[out] = []byte(`{"checks":[{"id":"P-NET-01","result":"blocked"}]}`)
				return pvesim.ExecResult{Stdout: "3 checks\n"}
			}
			return pvesim.BuiltinExec(argv, stdin, files)
		}
	})
	bin := bytes.Repeat([]byte("\x7fELF-probe"), 12000) // 120 kB: three file-writes
	if err := b.CopyTo(ctx, id, "", probe, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	res, err := b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{probe, "--json", out}, Timeout: 5 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v %v", res, err)
	}
	report, err := b.CopyFrom(ctx, id, "", out)
	if err != nil || !strings.Contains(string(report), "P-NET-01") {
		t.Fatalf("collect: %q %v", report, err)
	}
	if res, err := b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"rm", "-f", probe, out}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("remove: %+v %v", res, err)
	}
	sim.WithAgent(111, func(a *pvesim.Agent) {
		if len(a.Files[probe]) != 0 || len(a.Files[out]) != 0 {
			t.Error("probe files left in the guest")
		}
	})
}

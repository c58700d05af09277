package inspectlive_test

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

func docker(project string) sandbox.Sandbox {
	return sandbox.Sandbox{ID: "docker:local/" + project, Name: project, Backend: sandbox.KindDocker,
		Members: []sandbox.Member{{Name: project + "-default-1", Service: "default"}}}
}

func k8s(release string, labels, memberLabels map[string]string) sandbox.Sandbox {
	return sandbox.Sandbox{ID: "k8s:kind/default/" + release, Name: release, Backend: sandbox.KindKubernetes, Labels: labels,
		Members: []sandbox.Member{{Name: "agent-env-" + release + "-default-0", Labels: memberLabels}}}
}

func pve(name string, vms ...[2]string) sandbox.Sandbox {
	sb := sandbox.Sandbox{ID: "pve:lab/" + name, Name: name, Backend: sandbox.KindProxmox}
	for _, vm := range vms {
		sb.Members = append(sb.Members, sandbox.Member{ID: vm[0], Labels: map[string]string{"vmid": vm[0], "node": vm[1]}})
	}
	return sb
}

// TestLinks builds one eval with three samples of the same task (so the task name alone can
// never tell them apart) and links sandboxes of every backend and every strength to it.
func TestLinks(t *testing.T) {
	w := newWorld(t)
	pid := os.Getpid()
	db := w.buffer(pid, "ctf", "tidA")
	w.evalLog("ctf", "tidA", "openai/gpt-test")
	for _, s := range []string{"1", "2", "3", "4", "5"} {
		db.StartSample(t, s, 1, "uuid-"+s)
	}
	// 4 and 5 have no trace line: only their commands can tell their sandboxes.
	db.AddEvents(t, "4", 1, it.ToolCall("t4", 2, "gobuster dir -u http://10.0.0.9", true, ""), it.SandboxExec(5, "bash --login -c 'python3 -'", 0, ""))
	db.AddEvents(t, "5", 1, it.SandboxExec(2, "bash --login -c 'sqlmap -u http://10.0.0.9/?id=1'", 0, ""), it.SandboxExec(5, "bash --login -c 'python3 -'", 0, ""))
	db.AddEvents(t, "1", 1, it.SandboxExec(1, "bash --login -c 'cat /etc/passwd'", 0, "root:x:0:0"))
	db.AddEvents(t, "2", 1, it.ToolCall("t2", 2, "nmap -sV 10.0.0.5", true, ""))
	db.AddEvents(t, "1", 1, it.SandboxExec(3, "bash --login -c 'python3 -'", 0, ""))
	db.AddEvents(t, "2", 1, it.SandboxExec(4, "bash --login -c 'python3 -'", 0, ""))
	db.AddEvents(t, "3", 1,
		it.Logger(1, "Acquired instance pve1 from pool 'default': host=10.1.1.5 port=8006 node=pve-a"),
		it.Logger(2, "VM victim (ID=501) is ready"))
	w.trace(pid, it.TraceOther(0),
		it.TraceSubprocess(1, "inspect-ctf-itrace1", "ctf", 1, 1),
		it.TraceSubprocess(2, "inspect-ctf-itrace2", "ctf", 2, 1))
	wt := w.watcher()
	pollN(wt, 1)

	tests := []struct {
		name   string
		sb     sandbox.Sandbox
		execs  []string
		how    inspectlive.How
		sample string
		why    string
	}{
		{"k8s exact by release label", k8s("ab12cd34", map[string]string{"inspectSampleUUID": "uuid-2"}, nil), nil, inspectlive.HowExact, "2", "pod label"},
		{"k8s exact by pod label", k8s("ef56ab78", nil, map[string]string{"inspectSampleUUID": "uuid-1"}), nil, inspectlive.HowExact, "1", "uuid-1"},
		{"k8s uuid of no buffer", k8s("00000000", map[string]string{"inspectSampleUUID": "uuid-elsewhere"}, nil), nil, inspectlive.HowUnknown, "", "no sample buffer"},
		{"k8s without the label", k8s("11111111", nil, nil), nil, inspectlive.HowUnknown, "", "0.4.0"},
		{"docker trace", docker("inspect-ctf-itrace1"), nil, inspectlive.HowTrace, "1", "names project inspect-ctf-itrace1"},
		{"docker trace, second sample of the same task", docker("inspect-ctf-itrace2"), nil, inspectlive.HowTrace, "2", "sample 2"},
		{"docker trace confirmed by a command", docker("inspect-ctf-itrace1"), []string{"timeout -k 5s 180s bash --login -c 'cat /etc/passwd'"}, inspectlive.HowMatched, "1", "confirmed"},
		{"docker trace, a command of another sample does not confirm", docker("inspect-ctf-itrace1"), []string{"bash --login -c 'nmap -sV 10.0.0.5'"}, inspectlive.HowTrace, "1", "trace"},
		{"docker guess confirmed by the pending tool call", docker("inspect-ctf-iz9z9z9"), []string{"timeout -k 5s 180s bash --login -c 'gobuster dir -u http://10.0.0.9'"}, inspectlive.HowMatched, "4", "command"},
		{"docker guess confirmed by a sandbox event (Docker's unquoted argv)", docker("inspect-ctf-iy8y8y8"), []string{"exec_start: timeout -k 5s 180s bash --login -c sqlmap -u http://10.0.0.9/?id=1"}, inspectlive.HowMatched, "5", "command"},
		{"docker guess: a command two samples ran confirms nothing", docker("inspect-ctf-ix7x7x7"), []string{"bash --login -c 'python3 -'"}, inspectlive.HowGuessed, "", "task prefix ctf"},
		{"docker guess: a traced sample's command does not pull it to another sandbox", docker("inspect-ctf-iv5v5v5"), []string{"bash --login -c 'cat /etc/passwd'"}, inspectlive.HowGuessed, "", "no trace"},
		{"docker guessed", docker("inspect-ctf-iw6w6w6"), nil, inspectlive.HowGuessed, "", "no trace"},
		{"docker not an Inspect project", docker("myproject"), nil, inspectlive.HowUnknown, "", "not named like"},
		{"proxmox from logger lines", pve("ctf123z", [2]string{"501", "pve-a"}, [2]string{"502", "pve-a"}), nil, inspectlive.HowExact, "3", "VM 501 is ready on node pve-a"},
		{"proxmox VMID on another node", pve("ctf124z", [2]string{"501", "pve-b"}), nil, inspectlive.HowUnknown, "", "no sample transcript"},
		{"proxmox unknown VM", pve("ctf125z", [2]string{"999", "pve-a"}), nil, inspectlive.HowUnknown, "", "no sample transcript"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := wt.Link(tt.sb, tt.execs...)
			if l.How != tt.how || l.SampleID != tt.sample || !strings.Contains(l.Why, tt.why) {
				t.Fatalf("got how=%s sample=%q why=%q; want how=%s sample=%q why∋%q", l.How, l.SampleID, l.Why, tt.how, tt.sample, tt.why)
			}
			if l.Orphaned {
				t.Error("a sandbox of a live eval was called orphaned")
			}
			if tt.sb.ID != l.SandboxID {
				t.Errorf("sandbox id %q", l.SandboxID)
			}
			if l.Linked() {
				if l.Eval.Task != "ctf" || l.Eval.Model != "openai/gpt-test" || l.Eval.PID != pid || l.Eval.EvalID != "E-tidA" ||
					!strings.HasSuffix(l.Eval.LogPath, logBase("ctf", "tidA")) || l.Epoch != 1 || l.Status != inspectlive.StatusRunning {
					t.Errorf("eval ref %+v epoch %d status %s", l.Eval, l.Epoch, l.Status)
				}
				if l.How != inspectlive.HowTrace && l.UUID != "uuid-"+tt.sample {
					t.Errorf("uuid %q", l.UUID)
				}
			}
			if tt.how == inspectlive.HowGuessed && l.Eval.Task != "ctf" {
				t.Errorf("a guess must still name the task: %+v", l.Eval)
			}
		})
	}
}

// One process running the same task against two models (an eval set) has two buffers with
// the same (task, sample, epoch): the trace alone cannot pick, a command can.
func TestTwoEvalsOfOneTaskInOneProcess(t *testing.T) {
	w := newWorld(t)
	pid := os.Getpid()
	a, b := w.buffer(pid, "ctf", "tidA"), w.buffer(pid, "ctf", "tidB")
	w.evalLog("ctf", "tidA", "openai/model-a")
	w.evalLog("ctf", "tidB", "anthropic/model-b")
	a.StartSample(t, "1", 1, "ua")
	b.StartSample(t, "1", 1, "ub")
	a.AddEvents(t, "1", 1, it.SandboxExec(1, "ls /a", 0, ""))
	b.AddEvents(t, "1", 1, it.SandboxExec(1, "ls /b", 0, ""))
	w.trace(pid, it.TraceSubprocess(1, "inspect-ctf-ieval0b", "ctf", 1, 1))
	wt := w.watcher()
	pollN(wt, 1)

	l := wt.Link(docker("inspect-ctf-ieval0b"))
	if l.How != inspectlive.HowGuessed || l.SampleID != "" || !strings.Contains(l.Why, "2 evals") {
		t.Fatalf("ambiguous trace link must stay a guess: %+v", l)
	}
	l = wt.Link(docker("inspect-ctf-ieval0b"), "timeout -k 5s 60s ls /b")
	if l.How != inspectlive.HowMatched || l.Eval.Model != "anthropic/model-b" || l.UUID != "ub" {
		t.Fatalf("the command should pick eval B: %+v", l)
	}
}

func TestRetriedSampleSupersedesOldProject(t *testing.T) {
	w := newWorld(t)
	pid := os.Getpid()
	db := w.buffer(pid, "ctf", "tidA")
	db.StartSample(t, "1", 1, "u1-retry")
	w.trace(pid, it.TraceSubprocess(1, "inspect-ctf-ifirst1", "ctf", 1, 1), it.TraceSubprocess(90, "inspect-ctf-iretry1", "ctf", 1, 1))
	wt := w.watcher()
	pollN(wt, 1)
	old, cur := wt.Link(docker("inspect-ctf-ifirst1")), wt.Link(docker("inspect-ctf-iretry1"))
	if !old.Superseded || cur.Superseded || old.SampleID != "1" || cur.SampleID != "1" || cur.How != inspectlive.HowTrace {
		t.Fatalf("old %+v\ncurrent %+v", old, cur)
	}
}

// The eval process died (a pid of a process this test ran and reaped) and its buffer is gone:
// sandboxes it left are orphans; those of a live eval are not.
func TestOrphans(t *testing.T) {
	w := newWorld(t)
	dead := it.DeadPID(t)
	live := os.Getpid()
	gone := w.buffer(dead, "web", "tidD")
	gone.StartSample(t, "1", 1, "u-dead-1")
	gone.AddEvents(t, "1", 1, it.SandboxExec(1, "curl http://target", 0, ""))
	w.trace(dead, it.TraceSubprocess(1, "inspect-web-idead01", "web", 1, 1), it.TraceSubprocess(2, "inspect-web-idead02", "web", 2, 1))

	crashed := w.buffer(dead, "pwn", "tidC") // died without unlinking: the buffer stays
	crashed.StartSample(t, "1", 1, "u-crash-1")
	crashed.CompleteSample(t, "1", 1, "u-crash-1", nil)
	killed := w.buffer(dead, "rev", "tidK") // killed mid-sample (SIGKILL, OOM): still "running"
	killed.StartSample(t, "1", 1, "u-killed-1")

	alive := w.buffer(live, "ctf", "tidL")
	alive.StartSample(t, "1", 1, "u-live-1")
	alive.CompleteSample(t, "1", 1, "u-live-1", nil)

	wt := w.watcher()
	pollN(wt, 1)
	gone.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(gone.Path + s)
	}
	pollN(wt, 1)
	if e := evalByTask(t, wt, "web"); !e.Ended || e.Alive || e.Samples[0].Status != "ended" {
		t.Fatalf("ended eval %+v", e)
	}
	tests := []struct {
		name   string
		sb     sandbox.Sandbox
		orphan bool
	}{
		{"docker, eval ended, pid dead", docker("inspect-web-idead01"), true},
		{"docker, trace only (sample never reached the buffer), pid dead", docker("inspect-web-idead02"), true},
		{"k8s, sample completed, pid dead", k8s("c0ffee00", map[string]string{"inspectSampleUUID": "u-crash-1"}, nil), true},
		{"k8s, sample completed, eval alive", k8s("c0ffee01", map[string]string{"inspectSampleUUID": "u-live-1"}, nil), false},
		{"k8s, sample running, eval killed", k8s("c0ffee02", map[string]string{"inspectSampleUUID": "u-killed-1"}, nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := wt.Link(tt.sb)
			if !l.Linked() || l.Orphaned != tt.orphan {
				t.Fatalf("orphaned=%v want %v: %+v", l.Orphaned, tt.orphan, l)
			}
		})
	}
}

// Another host's data dir (a mount): its pids mean nothing here, so nothing is orphaned on
// their evidence.
func TestForeignDataDirNeverOrphans(t *testing.T) {
	w := newWorld(t)
	dead := it.DeadPID(t)
	db := w.buffer(dead, "ctf", "tidF")
	db.StartSample(t, "1", 1, "u-f")
	db.CompleteSample(t, "1", 1, "u-f", nil)
	wt := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, ForeignDataDirs: []string{w.data}})
	defer wt.Close()
	pollN(wt, 1)
	if l := wt.Link(k8s("f0f0f0f0", map[string]string{"inspectSampleUUID": "u-f"}, nil)); l.How != inspectlive.HowExact || l.Orphaned {
		t.Fatalf("%+v", l)
	}
}

// Under --no-sandbox-cleanup the process exits cleanly: its buffer is unlinked and its trace
// gzipped, yet the sandboxes it left still link to their samples, as orphans.
func TestOrphanAfterCleanExitFromGzippedTrace(t *testing.T) {
	w := newWorld(t)
	dead := it.DeadPID(t)
	w.trace(dead, it.TraceSubprocess(1, "inspect-ctf-ileft01", "ctf", "web-7", 1))
	plain := filepath.Join(w.data, "traces", fmt.Sprintf("trace-%d.log", dead))
	b, _ := os.ReadFile(plain)
	f, _ := os.Create(plain + ".gz")
	zw := gzip.NewWriter(f)
	zw.Write(b)
	zw.Close()
	f.Close()
	os.Remove(plain)
	wt := w.watcher()
	pollN(wt, 1)
	l := wt.Link(docker("inspect-ctf-ileft01"))
	if l.How != inspectlive.HowTrace || l.SampleID != "web-7" || l.Eval.PID != dead || l.Eval.Task != "ctf" || !l.Orphaned {
		t.Fatalf("%+v", l)
	}
}

package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
)

// TestCouldNotProbeWhenNothingIsWritableAndExecutable: read-only root and a noexec /tmp (Docker's
// tmpfs default) leave no place to run the probe; the result says so instead of passing.
func TestCouldNotProbeWhenNothingIsWritableAndExecutable(t *testing.T) {
	b := dockerBackend(t)
	_, bin := probeBinary(t)
	project := "rkprobe-noexec-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default", HostConfig: &container.HostConfig{
		ReadonlyRootfs: true, Tmpfs: map[string]string{"/tmp": "rw,noexec,nosuid,size=16m"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := probe.RunWith(ctx, b, b, b.SandboxID(project), "default", bin, facts.Targets{}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts != nil || !strings.HasPrefix(res.CouldNotProbe, "could not probe: no writable, executable place in the container") {
		t.Fatalf("result %+v, want could-not-probe", res)
	}
	t.Logf("summary %q; attempts %q", res.CouldNotProbe, res.Attempts)
	if len(res.CouldNotProbe) > 200 {
		t.Errorf("summary is %d characters; the attempts carry the detail", len(res.CouldNotProbe))
	}
	// Every place was tried and says why it failed: /tmp placed but noexec, the read-only root
	// refused the rest.
	outcome := map[string]string{}
	for _, a := range res.Attempts {
		if a.OK || a.Outcome == "" {
			t.Errorf("attempt %+v", a)
		}
		outcome[a.Place] = a.Outcome
	}
	for place, want := range map[string]string{"/tmp": "cannot execute", "/var/tmp": "cannot place binary", "/": "cannot place binary", "/dev/shm": "cannot execute"} {
		if !strings.HasPrefix(outcome[place], want) {
			t.Errorf("attempt at %s: %q, want %q", place, outcome[place], want)
		}
	}
	rep := probe.Assess(res, nil, nil, verdictVersions())
	if rep.Probed() || rep.Summary() != res.CouldNotProbe {
		t.Errorf("assessment of an unprobed sandbox: probed %v summary %q", rep.Probed(), rep.Summary())
	}
	for _, v := range rep.Verdicts.Classes {
		if v.Status == "mitigated" {
			t.Errorf("%s mitigated without a probe report", v.Class)
		}
	}
	// Nothing was left behind in /tmp.
	out, err := b.Exec(ctx, b.SandboxID(project), execReq("ls", "-A", "/tmp"))
	if err != nil || strings.TrimSpace(string(out.Stdout)) != "" {
		t.Errorf("/tmp after failed delivery: %q (%v)", out.Stdout, err)
	}
}

// TestNoSocketWithoutTargetsInContainer runs the delivered probe under a seccomp profile that
// traps socket(2) and connect(2): a probe that opened any socket would die of SIGSYS.
func TestNoSocketWithoutTargetsInContainer(t *testing.T) {
	b := dockerBackend(t)
	_, bin := probeBinary(t)
	project := "rkprobe-nosocket-" + dockertest.RunID
	profile := `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["socket","connect","socketpair"],"action":"SCMP_ACT_TRAP"}]}`
	dockertest.Project(t, project, dockertest.Service{Name: "default", HostConfig: &container.HostConfig{SecurityOpt: []string{"seccomp=" + profile}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sid := b.SandboxID(project)
	// Control: with a target the probe must dial, and the trap kills it.
	ctrl, err := probe.RunWith(ctx, b, b, sid, "default", bin, facts.Targets{Egress: []string{"127.0.0.1:9"}}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ctrl.Facts != nil || !strings.Contains(ctrl.CouldNotProbe, "probe exited 2") || len(ctrl.Attempts) != 1 {
		t.Fatalf("control run survived the socket trap: %+v", ctrl)
	}
	res, err := probe.RunWith(ctx, b, b, sid, "default", bin, facts.Targets{}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts == nil {
		t.Fatalf("probe without targets hit the socket trap: %s", res.CouldNotProbe)
	}
	if res.Facts.Network.Tested || res.Facts.Network.Egress[0].Status != facts.NetNotTested {
		t.Errorf("network %+v, want not tested", res.Facts.Network)
	}
}

// TestProbeInScratchImageAsNonRootReadOnly: the static binary alone in a FROM scratch image,
// run as nobody with a read-only root, completes and reports.
func TestProbeInScratchImageAsNonRootReadOnly(t *testing.T) {
	cli := dockertest.Engine(t)
	_, bin := probeBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := "rangekeeper-test/probe-scratch:" + dockertest.RunID
	if err := dockertest.BuildImage(ctx, cli, tag, dockertest.Labels(nil), map[string][]byte{"/rangekeeper-probe": bin}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	rep, logs := runToCompletion(t, cli, tag, []string{"/rangekeeper-probe", "--deadline", "5s"}, "65534:65534")
	if rep.Version != facts.Version || rep.Identity.EUID != 65534 || rep.Mounts.RootRW || rep.Deadline {
		t.Fatalf("report version %q euid %d root rw %v deadline %v; logs %s", rep.Version, rep.Identity.EUID, rep.Mounts.RootRW, rep.Deadline, logs)
	}
	if len(rep.Tooling.Found) != 0 {
		t.Errorf("scratch image has tools? %v", rep.Tooling.Found)
	}
}

// runToCompletion runs image as the container's main process and decodes its stdout report.
func runToCompletion(t *testing.T, cli *client.Client, image string, cmd []string, user string) (facts.Report, string) {
	t.Helper()
	ctx := context.Background()
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: image, Cmd: cmd, User: user, Labels: dockertest.Labels(nil)},
		HostConfig: &container.HostConfig{ReadonlyRootfs: true, NetworkMode: "none"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), created.ID, client.ContainerRemoveOptions{Force: true})
	})
	wait := cli.ContainerWait(ctx, created.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-wait.Result:
		if r.StatusCode != 0 {
			t.Fatalf("probe exited %d", r.StatusCode)
		}
	case err := <-wait.Error:
		t.Fatal(err)
	case <-time.After(time.Minute):
		t.Fatal("probe did not finish")
	}
	logs, err := cli.ContainerLogs(ctx, created.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, logs); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	var rep facts.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v; stderr %s", err, stderr.String())
	}
	return rep, stderr.String()
}

// TestDeliveryIntoTmpfsTheEngineCannotSee: with a writable root and an exec tmpfs on /tmp, the
// engine's archive API writes beneath the tmpfs; delivery notices and streams the binary in.
func TestDeliveryIntoTmpfsTheEngineCannotSee(t *testing.T) {
	b := dockerBackend(t)
	_, bin := probeBinary(t)
	project := "rkprobe-tmpfs-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default", User: "1000:1000", HostConfig: &container.HostConfig{
		Tmpfs: map[string]string{"/tmp": "rw,exec,size=16m,mode=1777"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := probe.RunWith(ctx, b, b, b.SandboxID(project), "default", bin, facts.Targets{}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("attempts %q cleanup %q", res.Attempts, res.Cleanup)
	if res.Facts == nil || !strings.HasPrefix(res.Location, "/tmp/.rangekeeper-probe-") || !strings.HasPrefix(res.Cleanup, "removed; an emptied file remains beneath the tmpfs") ||
		res.Attempts[0].Place != "/tmp" || !res.Attempts[0].OK || res.Attempts[0].How != "streamed through sh" {
		t.Fatalf("result %+v", res)
	}
	if res.Facts.Identity.EUID != 1000 {
		t.Errorf("probe ran as %d, want the member's user 1000", res.Facts.Identity.EUID)
	}
}

// TestDeliveryWithoutTmp: an image with a shell but no /tmp or /var/tmp and a
// writable root. The probe goes into a private directory the archive API creates at /, runs,
// and removes itself and the directory. Before: "could not probe".
func TestDeliveryWithoutTmp(t *testing.T) {
	b := dockerBackend(t)
	cli := dockertest.Engine(t)
	_, bin := probeBinary(t)
	busybox, err := os.ReadFile(dockertest.BusyboxPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := "rangekeeper-test/probe-notmp:" + dockertest.RunID
	if err := dockertest.BuildImage(ctx, cli, tag, dockertest.Labels(nil), map[string][]byte{"/bin/sh": busybox, "/bin/sleep": busybox}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	project := "rkprobe-notmp-" + dockertest.RunID
	netName := internalNetwork(t, cli, project)
	dockertest.StartService(t, project, netName, tag, dockertest.Service{Name: "default"})
	sid := b.SandboxID(project)
	res, err := probe.RunWith(ctx, b, b, sid, "default", bin, facts.Targets{}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("location %q cleanup %q attempts %q", res.Location, res.Cleanup, res.Attempts)
	if res.Facts == nil {
		t.Fatalf("could not probe: %s %q", res.CouldNotProbe, res.Attempts)
	}
	last := res.Attempts[len(res.Attempts)-1]
	if !strings.HasPrefix(res.Location, "/.rangekeeper-probe-") || res.Cleanup != "removed" || last.Place != "/" || !last.OK ||
		last.How != "private directory through the file API" || !res.Facts.SelfRemoved {
		t.Fatalf("result %+v", res)
	}
	out, err := b.Exec(ctx, sid, execReq("/bin/sh", "-c", "for f in /.rangekeeper-probe-* /.rangekeeper-probe-*/*; do echo \"$f\"; done"))
	if err != nil || strings.TrimSpace(string(out.Stdout)) != "/.rangekeeper-probe-*\n/.rangekeeper-probe-*/*" {
		t.Errorf("left behind at /: %q (%v)", out.Stdout, err)
	}
}

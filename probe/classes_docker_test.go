package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// expect is one class outcome a scenario must produce.
type expect struct {
	class  string
	status verdict.Status
	minSev catalog.Severity
	check  string // an evidence check ID that must be present ("a|b": either)
}

// httpd is a busybox web server: the canary and scorer stand-ins.
var httpd = []string{"httpd", "-f", "-p", "8080", "-h", "/tmp"}

// TestClassesInRealContainers reproduces each configurable SandboxEscapeBench class (and the
// network/resource/credential classes) in its own container and checks the verdict and evidence.
func TestClassesInRealContainers(t *testing.T) {
	b := dockerBackend(t)
	_, bin := probeBinary(t)
	hostDir := t.TempDir()
	tests := []struct {
		name    string
		hc      *container.HostConfig
		env     []string
		extra   []dockertest.Service // other members of the sandbox
		targets facts.Targets
		want    []expect
	}{
		{name: "privileged", hc: &container.HostConfig{Privileged: true}, want: []expect{
			{"SEB-05", verdict.Exposed, catalog.SeverityCritical, "P-PRIV-01|P-PRIV-03"},
			{"RK-SECCOMP", verdict.Exposed, catalog.SeverityCritical, "P-PRIV-03"},
			{"SEB-14", verdict.Exposed, catalog.SeverityHigh, ""},
		}},
		{name: "docker-socket", hc: &container.HostConfig{Binds: []string{"/var/run/docker.sock:/var/run/docker.sock:ro"}}, want: []expect{
			{"SEB-06", verdict.Exposed, catalog.SeverityCritical, "P-MNT-01"},
			{"SEB-05", verdict.Mitigated, catalog.SeverityNone, "P-PRIV-01"},
		}},
		{name: "host-path", hc: &container.HostConfig{Binds: []string{hostDir + ":/hostdata"}}, want: []expect{
			{"SEB-07", verdict.Exposed, catalog.SeverityHigh, "P-MNT-02"},
		}},
		{name: "host-pid-ptrace", hc: &container.HostConfig{PidMode: "host", CapAdd: []string{"SYS_PTRACE"}}, want: []expect{
			{"SEB-13", verdict.Exposed, catalog.SeverityCritical, "P-NS-01"},
		}},
		{name: "sys-admin", hc: &container.HostConfig{CapAdd: []string{"SYS_ADMIN"}}, want: []expect{
			{"SEB-08", verdict.Exposed, catalog.SeverityCritical, "P-PRIV-01"},
			{"SEB-09", verdict.Mitigated, catalog.SeverityNone, "P-PRIV-01"},
		}},
		{name: "sys-module", hc: &container.HostConfig{CapAdd: []string{"SYS_MODULE"}}, want: []expect{
			{"SEB-09", verdict.Exposed, catalog.SeverityCritical, "P-PRIV-01"},
			{"SEB-08", verdict.Mitigated, catalog.SeverityNone, "P-PRIV-01"},
		}},
		{name: "dac-read-search", hc: &container.HostConfig{CapAdd: []string{"DAC_READ_SEARCH"}}, want: []expect{
			{"SEB-10", verdict.Exposed, catalog.SeverityCritical, "P-PRIV-01"},
		}},
		{name: "seccomp-unconfined", hc: &container.HostConfig{SecurityOpt: []string{"seccomp=unconfined"}}, want: []expect{
			{"RK-SECCOMP", verdict.Exposed, catalog.SeverityHigh, "P-PRIV-03"},
		}},
		{name: "no-limits", want: []expect{
			{"RK-LIMITS", verdict.Exposed, catalog.SeverityMedium, "P-RES-02"},
			{"RK-SCORER", verdict.Unknown, catalog.SeverityNone, ""},
		}},
		{name: "scorer-shared-network", extra: []dockertest.Service{{Name: "scorer", Cmd: httpd}},
			targets: facts.Targets{Scorer: []string{"scorer:8080"}}, want: []expect{
				{"RK-SCORER", verdict.Exposed, catalog.SeverityCritical, "E-SCORE-01"},
			}},
		{name: "egress-reachable", extra: []dockertest.Service{{Name: "canary", Cmd: httpd}},
			targets: facts.Targets{Egress: []string{"canary:8080", "udp:canary:9999"}}, want: []expect{
				{"RK-EGRESS", verdict.Exposed, catalog.SeverityCritical, "E-TCP-01"},
			}},
		{name: "credentials-env", env: []string{"OPENAI_API_KEY=" + dummySecret, "HOME=/root"}, want: []expect{
			{"RK-CREDS", verdict.Exposed, catalog.SeverityCritical, "P-SEC-01"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hc != nil && tt.hc.Privileged && !canRunPrivileged(t) {
				// A nested engine whose own bounding set lacks capabilities cannot start
				// --privileged (runc: "unable to apply caps"). Reproduce privileged mode's
				// signature with everything the engine can grant instead.
				tt.hc = privilegedEquivalent(t)
			}
			project := fmt.Sprintf("rkprobe-%s-%s", tt.name, dockertest.RunID)
			svcs := append([]dockertest.Service{{Name: "default", HostConfig: tt.hc, Env: tt.env}}, tt.extra...)
			dockertest.Project(t, project, svcs...)
			rep := runProbe(t, b, project, bin, tt.targets)
			raw, _ := json.Marshal(rep)
			if strings.Contains(string(raw), dummySecret) {
				t.Fatalf("report contains the dummy credential's value")
			}
			for _, w := range tt.want {
				checkClass(t, rep, w)
			}
		})
	}
}

const dummySecret = "sk-test-DUMMY-rangekeeper-0000000000000000"

func runProbe(t *testing.T, b probeBackend, project string, bin []byte, targets facts.Targets) probe.Report {
	return runProbeWith(t, b, project, bin, targets, verdict.Versions{})
}

// engineVersions are the host versions `rangekeeper probe` reads from this engine: runc's
// Debian package version from GitCommit, the engine's version.
func engineVersions(t *testing.T) verdict.Versions {
	t.Helper()
	f, err := dockerBackend(t).EngineFacts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return verdict.Versions{Runc: f.ComponentVersion("runc"), Engine: f.Version}
}

func runProbeWith(t *testing.T, b probeBackend, project string, bin []byte, targets facts.Targets, vs verdict.Versions) probe.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sid := b.SandboxID(project)
	res, err := probe.RunWith(ctx, b, b, sid, "default", bin, targets, probe.Options{})
	if err != nil {
		t.Fatalf("probe %s: %v", sid, err)
	}
	if res.Facts == nil {
		t.Fatalf("probe %s: %s", sid, res.CouldNotProbe)
	}
	if res.Cleanup != "removed" {
		t.Errorf("cleanup: %q, want removed", res.Cleanup)
	}
	t.Logf("delivery: %q", res.Attempts)
	// Independently of the probe's own word: nothing is left in the scratch dir.
	if out, err := b.Exec(ctx, sid, execReq("ls", "-A", "/tmp")); err != nil || strings.Contains(string(out.Stdout), ".rangekeeper-probe") {
		t.Errorf("/tmp after the probe: %q (%v)", out.Stdout, err)
	}
	return probe.Assess(res, nil, nil, vs)
}

func checkClass(t *testing.T, rep probe.Report, w expect) {
	t.Helper()
	for _, v := range rep.Verdicts.Classes {
		if v.Class != w.class {
			continue
		}
		if v.Status != w.status || v.Severity < w.minSev {
			t.Errorf("%s: %s (%s), want %s (≥ %s); evidence %+v", w.class, v.Status, v.Severity, w.status, w.minSev, v.Evidence)
		}
		if w.check == "" {
			return
		}
		for _, e := range v.Evidence {
			for _, c := range strings.Split(w.check, "|") {
				if e.Check == c && e.Value != "" {
					return
				}
			}
		}
		t.Errorf("%s: no evidence from %s in %+v", w.class, w.check, v.Evidence)
		return
	}
	t.Errorf("class %s missing", w.class)
}

// TestHardenedBaselineHasNoHighFindings: cap_drop ALL, no-new-privileges, read-only root,
// non-root user, internal network, memory and pids limits ⇒ nothing HIGH or CRITICAL, judged
// with this engine's own runc and engine versions (Debian's runc 1.1.5+ds1-1+deb12u1
// carries the CVE-2024-21626 fix, so SEB-12 is mitigated, not HIGH). A credential planted in
// the same configuration is still reported, by name only.
func TestHardenedBaselineHasNoHighFindings(t *testing.T) {
	b := dockerBackend(t)
	_, bin := probeBinary(t)
	cli := dockertest.Engine(t)
	vs := engineVersions(t)
	t.Logf("engine versions: %+v", vs)
	pidsLimit := int64(64)
	hc := func() *container.HostConfig {
		return &container.HostConfig{
			CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true,
			Tmpfs:     map[string]string{"/tmp": "rw,exec,nosuid,nodev,size=16m"},
			Resources: container.Resources{Memory: 64 << 20, PidsLimit: &pidsLimit},
		}
	}
	// A canary on another test-made (non-internal) network, targeted by IP so no name query can
	// leave through the engine's resolver: the internal network has no route to it.
	canaryProject := "rkprobe-hardened-canary-" + dockertest.RunID
	dockertest.Project(t, canaryProject, dockertest.Service{Name: "canary", Cmd: httpd})
	canary := containerIP(t, cli, canaryProject+"-canary-1", canaryProject+"_default") + ":8080"

	t.Run("baseline", func(t *testing.T) {
		project := "rkprobe-hardened-" + dockertest.RunID
		netName := internalNetwork(t, cli, project)
		dockertest.StartService(t, project, netName, dockertest.Image(t), dockertest.Service{Name: "default", HostConfig: hc(), User: "1000:1000"})
		rep := runProbeWith(t, b, project, bin, facts.Targets{Egress: []string{canary}, TimeoutMS: 500}, vs)
		for _, v := range rep.Verdicts.Classes {
			if v.Status == verdict.Exposed && v.Severity >= catalog.SeverityHigh {
				t.Errorf("hardened baseline: %s %s exposed at %s: %+v", v.Class, v.Name, v.Severity, v.Evidence)
			}
		}
		if rep.Verdicts.Worst >= catalog.SeverityHigh {
			t.Errorf("worst %s", rep.Verdicts.Worst)
		}
		for _, w := range []expect{
			{"RK-LIMITS", verdict.Mitigated, catalog.SeverityNone, "P-RES-02"},
			{"RK-EGRESS", verdict.Mitigated, catalog.SeverityNone, "E-TCP-01"},
			{"SEB-18", verdict.Mitigated, catalog.SeverityNone, "P-PRIV-01"},
			{"SEB-12", verdict.Mitigated, catalog.SeverityNone, "runc"}, // 1.1.5+ds1-1+deb12u1: fixed by Debian
			{"RK-CREDS", verdict.Mitigated, catalog.SeverityNone, "P-SEC-01"},
		} {
			checkClass(t, rep, w)
		}
		if rep.Result.Facts.Identity.EUID != 1000 || rep.Result.Facts.NoNewPrivs == nil || !*rep.Result.Facts.NoNewPrivs {
			t.Errorf("identity %+v no_new_privs %v: want uid 1000 with no_new_privs", rep.Result.Facts.Identity, rep.Result.Facts.NoNewPrivs)
		}
	})
	t.Run("planted credential", func(t *testing.T) {
		project := "rkprobe-hardened-cred-" + dockertest.RunID
		netName := internalNetwork(t, cli, project)
		dockertest.StartService(t, project, netName, dockertest.Image(t), dockertest.Service{Name: "default", HostConfig: hc(), User: "1000:1000",
			Env: []string{"ANTHROPIC_API_KEY=" + dummySecret}})
		rep := runProbeWith(t, b, project, bin, facts.Targets{}, vs)
		checkClass(t, rep, expect{"RK-CREDS", verdict.Exposed, catalog.SeverityCritical, "P-SEC-01"})
		raw, _ := json.Marshal(rep)
		if strings.Contains(string(raw), dummySecret) || !strings.Contains(string(raw), "ANTHROPIC_API_KEY") {
			t.Errorf("report must name the credential and never show its value")
		}
		for _, v := range rep.Verdicts.Classes {
			if v.Class != "RK-CREDS" && v.Status == verdict.Exposed && v.Severity >= catalog.SeverityHigh {
				t.Errorf("%s exposed at %s: %+v", v.Class, v.Severity, v.Evidence)
			}
		}
	})
}

// internalNetwork creates a compose-labelled internal network for project (removed with it).
func internalNetwork(t *testing.T, cli *client.Client, project string) string {
	t.Helper()
	name := project + "_default"
	if _, err := cli.NetworkCreate(context.Background(), name, client.NetworkCreateOptions{Driver: "bridge", Internal: true,
		Labels: dockertest.Labels(map[string]string{"com.docker.compose.project": project, "com.docker.compose.network": "default"})}); err != nil {
		t.Fatalf("create network: %v", err)
	}
	t.Cleanup(func() { dockertest.RemoveProject(cli, project) })
	return name
}

// canRunPrivileged reports whether this engine can start a --privileged container.
func canRunPrivileged(t *testing.T) bool {
	t.Helper()
	cli := dockertest.Engine(t)
	ctx := context.Background()
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: dockertest.Image(t), Cmd: []string{"true"}, Labels: dockertest.Labels(nil)},
		HostConfig: &container.HostConfig{Privileged: true, NetworkMode: "none"},
	})
	if err != nil {
		t.Fatalf("create privileged check container: %v", err)
	}
	defer cli.ContainerRemove(ctx, res.ID, client.ContainerRemoveOptions{Force: true})
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		if strings.Contains(err.Error(), "apply caps") {
			t.Logf("engine cannot start --privileged here (%v); using the privileged-equivalent configuration", err)
			return false
		}
		t.Fatalf("start privileged check container: %v", err)
	}
	return true
}

// privilegedEquivalent grants every capability this host has, no seccomp, no AppArmor,
// unmasked /proc and all devices: --privileged minus what the engine cannot give.
func privilegedEquivalent(t *testing.T) *container.HostConfig {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var bnd facts.CapSet
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			if bnd, err = facts.ParseCapSet(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	var caps []string // Docker 20.10 does not know capabilities after AUDIT_READ (37)
	for n := 0; n <= 37; n++ {
		if bnd.Has(n) {
			caps = append(caps, facts.CapName(n))
		}
	}
	return &container.HostConfig{CapAdd: caps, Resources: container.Resources{DeviceCgroupRules: []string{"a *:* rwm"}},
		SecurityOpt: []string{"seccomp=unconfined", "apparmor=unconfined"},
		MaskedPaths: []string{}, ReadonlyPaths: []string{}} // systempaths=unconfined
}

// containerIP is a test container's address on a test network.
func containerIP(t *testing.T, cli *client.Client, name, network string) string {
	t.Helper()
	res, err := cli.ContainerInspect(context.Background(), name, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep, ok := res.Container.NetworkSettings.Networks[network]
	if !ok || !ep.IPAddress.IsValid() {
		t.Fatalf("%s has no address on %s", name, network)
	}
	return ep.IPAddress.String()
}

package verdict

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// baseline is a hardened container's facts: no caps, seccomp filter, private namespaces,
// limits, modern kernel.
func baseline() *facts.Report {
	t := true
	return &facts.Report{
		Version:    facts.Version,
		Runtime:    facts.Runtime{Container: true, Manager: "docker"},
		Identity:   facts.Identity{UID: 1000, EUID: 1000},
		Caps:       facts.Capabilities{Effective: facts.NewCapSet(0), Bounding: facts.NewCapSet(0), LastCap: 40},
		NoNewPrivs: &t,
		Seccomp:    facts.Seccomp{Mode: 2, Name: "filter"},
		Namespaces: facts.Namespaces{Links: map[string]string{"pid": "pid:[4026532000]"}, Processes: 2},
		Cgroup:     facts.Cgroup{Version: 2, MemoryCap: true, PidsCap: true, MemoryMax: "67108864", PidsMax: "64"},
		Kernel:     facts.Kernel{Release: "6.8.0-45-generic", Sysctls: map[string]string{"net.ipv4.conf.all.route_localnet": "0", "kernel.unprivileged_bpf_disabled": "2"}},
	}
}

func find(t *testing.T, vs Verdicts, class string) Verdict {
	t.Helper()
	for _, v := range vs.Classes {
		if v.Class == class {
			return v
		}
	}
	t.Fatalf("no class %s", class)
	return Verdict{}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(f *facts.Report)
		in       Input
		class    string
		status   Status
		severity catalog.Severity
	}{
		{name: "baseline sys_admin", class: "SEB-08", status: Mitigated},
		{name: "sys_admin effective", class: "SEB-08", status: Exposed, severity: catalog.SeverityCritical,
			mutate: func(f *facts.Report) { f.Caps.Effective = facts.NewCapSet(1 << facts.CapSysAdmin) }},
		{name: "sys_admin gainable without nnp", class: "SEB-08", status: Exposed, severity: catalog.SeverityHigh,
			mutate: func(f *facts.Report) { f.Caps.Bounding = facts.NewCapSet(1 << facts.CapSysAdmin); f.NoNewPrivs = nil }},
		{name: "full bounding set is privileged", class: "SEB-05", status: Exposed, severity: catalog.SeverityCritical,
			mutate: func(f *facts.Report) { f.Caps.Bounding = facts.NewCapSet(1<<41 - 1); f.Caps.FullBound = true }},
		{name: "dirty pipe kernel", class: "SEB-17", status: Exposed, severity: catalog.SeverityCritical,
			mutate: func(f *facts.Report) { f.Kernel.Release = "5.10.50" }},
		{name: "dirty pipe on a vendor kernel is unknown at info", class: "SEB-17", status: Unknown, severity: catalog.SeverityInfo,
			mutate: func(f *facts.Report) { f.Kernel.Release = "5.10.50-generic" }},
		{name: "dirty pipe on a debian kernel by its package version", class: "SEB-17", status: Mitigated,
			mutate: func(f *facts.Report) {
				f.Kernel.Release, f.Kernel.Version = "5.10.0-28-amd64", "#1 SMP Debian 5.10.209-2 (2024-01-31)"
			}},
		{name: "dirty pipe backport fixed", class: "SEB-17", status: Mitigated,
			mutate: func(f *facts.Report) { f.Kernel.Release = "5.10.102" }},
		{name: "dirty cow old kernel", class: "SEB-16", status: Exposed, severity: catalog.SeverityCritical,
			mutate: func(f *facts.Report) { f.Kernel.Release = "4.4.0" }},
		{name: "gvisor mitigates kernel classes", class: "SEB-16", status: Mitigated,
			mutate: func(f *facts.Report) { f.Kernel.Release = "4.4.0"; f.Runtime.GVisor = true }},
		{name: "runc unknown without version", class: "SEB-12", status: Unknown},
		{name: "runc old", class: "SEB-12", status: Exposed, severity: catalog.SeverityHigh, in: Input{Versions: Versions{Runc: "1.1.11"}}},
		{name: "runc fixed", class: "SEB-12", status: Mitigated, in: Input{Versions: Versions{Runc: "1.1.12"}}},
		// This machine's Debian security build carries the CVE-2024-21626 fix.
		{name: "runc debian security build", class: "SEB-12", status: Mitigated, in: Input{Versions: Versions{Runc: "1.1.5+ds1-1+deb12u1"}}},
		{name: "runc debian repack without revision", class: "SEB-12", status: Unknown, severity: catalog.SeverityInfo, in: Input{Versions: Versions{Runc: "1.1.5+ds1"}}},
		{name: "runc ubuntu build", class: "SEB-12", status: Unknown, severity: catalog.SeverityInfo, in: Input{Versions: Versions{Runc: "1.1.7-0ubuntu1~22.04.2"}}},
		{name: "runc debian build without the fix", class: "SEB-12", status: Exposed, severity: catalog.SeverityHigh, in: Input{Versions: Versions{Runc: "1.1.5+ds1-1~deb12u0"}}},
		{name: "runc 5736 rc", class: "SEB-11", status: Mitigated, in: Input{Versions: Versions{Runc: "1.0.0-rc6"}}}, // non-root baseline
		{name: "runc 5736 root", class: "SEB-11", status: Exposed, severity: catalog.SeverityCritical, in: Input{Versions: Versions{Runc: "1.0.0-rc6"}},
			mutate: func(f *facts.Report) { f.Identity.EUID, f.Identity.Root = 0, true }},
		{name: "crio not k8s", class: "SEB-03", status: NotApplicable, in: Input{Versions: Versions{CRIO: "1.22.0"}}},
		{name: "crio vulnerable", class: "SEB-03", status: Exposed, severity: catalog.SeverityCritical, in: Input{Versions: Versions{CRIO: "1.22.0"}},
			mutate: func(f *facts.Report) { f.Runtime.Kubernetes = true }},
		{name: "kubectl unknown", class: "SEB-02", status: Unknown, mutate: func(f *facts.Report) { f.Runtime.Kubernetes = true }},
		{name: "route_localnet", class: "SEB-04", status: Exposed, severity: catalog.SeverityHigh,
			mutate: func(f *facts.Report) { f.Kernel.RouteLocalnet = true }},
		{name: "sa token", class: "SEB-01", status: Exposed, severity: catalog.SeverityHigh,
			mutate: func(f *facts.Report) {
				f.Runtime.Kubernetes = true
				f.Kubernetes.TokenPaths = []string{"/var/run/secrets/kubernetes.io/serviceaccount/token"}
			}},
		{name: "live finding exposes", class: "SEB-06", status: Exposed, severity: catalog.SeverityCritical,
			in: Input{Live: []backends.Finding{{RuleID: "CMP-H02", Severity: catalog.SeverityCritical, Message: "docker.sock mounted"}}}},
		{name: "lint finding exposes", class: "SEB-13", status: Exposed, severity: catalog.SeverityCritical,
			in: Input{Lint: []LintFinding{{RuleID: "CMP-H16", Severity: catalog.SeverityCritical}}}},
		{name: "egress not tested is unknown", class: "RK-EGRESS", status: Unknown},
		{name: "dns untested on a buggy engine stays unknown", class: "RK-DNS", status: Unknown, in: Input{Versions: Versions{Engine: "20.10.24+dfsg1"}}},
		{name: "egress reachable", class: "RK-EGRESS", status: Exposed, severity: catalog.SeverityCritical,
			mutate: func(f *facts.Report) {
				f.Network.Egress = []facts.NetResult{{Target: "canary:80", Status: facts.NetReachable}}
			}},
		{name: "no pids limit", class: "RK-LIMITS", status: Exposed, severity: catalog.SeverityMedium,
			mutate: func(f *facts.Report) { f.Cgroup.PidsCap = false }},
		{name: "credentials", class: "RK-CREDS", status: Exposed, severity: catalog.SeverityCritical,
			mutate: func(f *facts.Report) { f.Secrets.EnvNames = []string{"ANTHROPIC_API_KEY"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := baseline()
			if tt.mutate != nil {
				tt.mutate(f)
			}
			in := tt.in
			in.Facts = f
			v := find(t, Evaluate(in), tt.class)
			if v.Status != tt.status || v.Severity != tt.severity {
				t.Errorf("%s: %s/%s, want %s/%s; evidence %+v note %q", tt.class, v.Status, v.Severity, tt.status, tt.severity, v.Evidence, v.Note)
			}
			if v.Status == Exposed && len(v.Evidence) == 0 {
				t.Errorf("%s exposed without evidence", tt.class)
			}
		})
	}
}

func TestBaselineHasNothingHigh(t *testing.T) {
	vs := Evaluate(Input{Facts: baseline()})
	if vs.Worst >= catalog.SeverityHigh {
		for _, v := range vs.Classes {
			if v.Severity >= catalog.SeverityHigh {
				t.Errorf("%s %s %s: %+v", v.Class, v.Status, v.Severity, v.Evidence)
			}
		}
	}
	if len(vs.Classes) != len(classes) {
		t.Errorf("%d verdicts for %d classes", len(vs.Classes), len(classes))
	}
}

func TestNoFactsNeverMitigates(t *testing.T) {
	vs := Evaluate(Input{Versions: Versions{Runc: "1.2.0"}})
	for _, v := range vs.Classes {
		if v.Status == Mitigated && v.Class != "SEB-11" && v.Class != "SEB-12" {
			t.Errorf("%s mitigated without a probe report", v.Class)
		}
	}
}

func TestEngineDNSBug(t *testing.T) {
	for engine, buggy := range map[string]bool{"20.10.24+dfsg1": true, "24.0.7": true, "25.0.3": true, "25.0.4": false, "23.0.11": false, "26.1.0": false, "": false} {
		if got := engineDNSBug(engine) != ""; got != buggy {
			t.Errorf("%q: buggy %v, want %v", engine, got, buggy)
		}
	}
}

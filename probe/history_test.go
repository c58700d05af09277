package probe_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

func hardenedFacts() *facts.Report {
	nnp := true
	return &facts.Report{Version: facts.Version,
		Runtime:    facts.Runtime{Container: true},
		Identity:   facts.Identity{UID: 1000, EUID: 1000},
		Caps:       facts.Capabilities{Effective: facts.NewCapSet(0), Bounding: facts.NewCapSet(0), LastCap: 40},
		NoNewPrivs: &nnp, Seccomp: facts.Seccomp{Mode: 2},
		Cgroup: facts.Cgroup{Version: 2, MemoryCap: true, PidsCap: true},
		Kernel: facts.Kernel{Release: "6.8.0"},
	}
}

func TestHistoryAndDiff(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sid := "docker:default/eval-1"
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	first := probe.Assess(probe.Result{SandboxID: sid, Time: t0, Facts: hardenedFacts()}, nil, nil, verdict.Versions{})
	worse := hardenedFacts()
	worse.Caps.Effective = facts.NewCapSet(1 << facts.CapSysAdmin)
	worse.Secrets.EnvNames = []string{"OPENAI_API_KEY"}
	second := probe.Assess(probe.Result{SandboxID: sid, Time: t0.Add(time.Hour), Facts: worse}, nil, nil, verdict.Versions{})
	for _, r := range []probe.Report{second, first} { // stored out of order on purpose
		if err := probe.Save(db, r); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := probe.History(db, sid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || !hist[0].Time.Equal(t0) || !hist[1].Critical() || hist[0].Critical() {
		t.Fatalf("history %d entries, times %v / %v", len(hist), hist[0].Time, hist[1].Time)
	}
	// Decoded reports keep capability masks, so verdicts recomputed from history agree.
	if !hist[1].Result.Facts.Caps.Effective.Has(facts.CapSysAdmin) {
		t.Error("capability mask lost in bbolt round trip")
	}
	changes := probe.Diff(hist[0], hist[1])
	got := map[string]probe.Change{}
	for _, c := range changes {
		got[c.Class] = c
	}
	if c, ok := got["SEB-08"]; !ok || !c.Regression || c.To != verdict.Exposed || c.ToSev != catalog.SeverityCritical {
		t.Errorf("SEB-08 change %+v", c)
	}
	// SYS_ADMIN also opens bpf() (SEB-15); the credential adds RK-CREDS.
	if _, ok := got["RK-CREDS"]; !ok || got["SEB-15"].To != verdict.Exposed || len(changes) != 3 {
		t.Errorf("changes %+v, want SEB-08, SEB-15 and RK-CREDS", changes)
	}
	if back := probe.Diff(hist[1], hist[0]); len(back) != 3 || back[0].Regression {
		t.Errorf("reverse diff %+v", back)
	}
	last, latestChanges, ok, err := probe.Latest(db, sid)
	if err != nil || !ok || !last.Time.Equal(t0.Add(time.Hour)) || len(latestChanges) != 3 {
		t.Errorf("Latest: %v %v %d changes, %v", ok, last.Time, len(latestChanges), err)
	}
	if _, _, ok, err := probe.Latest(db, "docker:default/never"); ok || err != nil {
		t.Errorf("Latest of a never-probed sandbox: %v %v", ok, err)
	}
	if s := hist[1].Summary(); !strings.Contains(s, "worst critical") || !strings.Contains(s, "SEB-08") {
		t.Errorf("summary %q", s)
	}
}

func TestBinaryLooksInConfiguredPlaces(t *testing.T) {
	path, want := probeBinary(t)
	t.Setenv(probe.EnvBinary, path)
	got, where, err := probe.Binary()
	if err != nil || where != path || !bytes.Equal(got, want) {
		t.Fatalf("Binary() = %d bytes from %q, %v", len(got), where, err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv(probe.EnvBinary, missing)
	wd, _ := os.Getwd()
	t.Chdir(t.TempDir())
	defer os.Chdir(wd)
	if _, _, err := probe.Binary(); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "make build") {
		t.Errorf("missing binary error: %v", err)
	}
}

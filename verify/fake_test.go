package verify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// fakeDriver stands in for a backend: the engine tests exercise verify's own logic (agent
// choice, expectations, evidence, comparison, exit codes, teardown on every path) without
// an engine; dockerstage's tests do the same on the real one.
type fakeDriver struct {
	plan    verify.Plan
	upErr   error
	waitErr error
	events  []canary.Event

	mu       sync.Mutex
	upCalled bool
	torn     []string
}

func (d *fakeDriver) Name() string { return "fake:test" }

func (d *fakeDriver) Load(_ context.Context, req verify.LoadRequest) (verify.Session, error) {
	p := d.plan
	p.Project = req.Project
	return &fakeSession{d: d, plan: p}, nil
}

func (d *fakeDriver) Teardown(_ context.Context, runID string) (verify.Counts, verify.Counts, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.torn = append(d.torn, runID)
	return verify.Counts{Containers: 3, Networks: 2}, verify.Counts{}, nil
}

func (d *fakeDriver) RemoveCommand(runID string) string { return "rangekeeper verify --down " + runID }

type fakeSession struct {
	d    *fakeDriver
	plan verify.Plan
}

func (s *fakeSession) Plan() verify.Plan { return s.plan }
func (s *fakeSession) SandboxID() string { return "fake:test/" + s.plan.Project }
func (s *fakeSession) Up(context.Context) error {
	s.d.mu.Lock()
	s.d.upCalled = true
	s.d.mu.Unlock()
	return s.d.upErr
}
func (s *fakeSession) Wait(context.Context) error { return s.d.waitErr }

// Arm gives every member an egress, a host-gateway and a DNS target, plus one target per scorer.
func (s *fakeSession) Arm(_ context.Context, req verify.ArmRequest) (map[string]verify.MemberTargets, error) {
	out := map[string]verify.MemberTargets{}
	for i, m := range req.Members {
		mt := verify.MemberTargets{
			Targets: []verify.Target{
				{Kind: verify.TargetEgress, Addr: fmt.Sprintf("198.51.100.1:%d", 100+i), Tag: canary.TagOf(verify.TargetEgress, m), What: "the outside canary"},
				{Kind: verify.TargetHostGW, Addr: fmt.Sprintf("198.51.100.2:%d", 200+i), Tag: canary.TagOf(verify.TargetHostGW, m), What: "the host side"},
			},
			DNSName: fmt.Sprintf("*.m%d.zone.invalid", i), DNSSuffix: fmt.Sprintf(".m%d.zone.invalid", i),
		}
		for _, sc := range req.Scorers {
			if sc != m {
				mt.Targets = append(mt.Targets, verify.Target{Kind: verify.TargetScorer, Scorer: sc, Addr: fmt.Sprintf("198.51.100.3:%d", 300+i),
					Tag: canary.TagOf("scorer:"+sc, m), What: fmt.Sprintf("scorer %q", sc)})
			}
		}
		out[m] = mt
	}
	return out, nil
}

func (s *fakeSession) Evidence(context.Context) ([]canary.Event, error) { return s.d.events, nil }
func (s *fakeSession) Versions(context.Context) verdict.Versions        { return verdict.Versions{} }

// hardenedFacts is a real probe report from a hardened container (dockerstage -update).
func hardenedFacts(t *testing.T) *facts.Report {
	t.Helper()
	b, err := os.ReadFile("testdata/facts-hardened.json")
	if err != nil {
		t.Fatal(err)
	}
	var f facts.Report
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// fakeProber answers every member with the hardened facts, marking the targets in reach as
// reachable and every other target blocked.
func fakeProber(t *testing.T, reach map[string]bool, fail map[string]string) verify.Prober {
	base := hardenedFacts(t)
	return verify.ProberFunc(func(_ context.Context, req verify.ProbeRequest) (probe.Result, error) {
		res := probe.Result{SandboxID: req.SandboxID, Member: req.Member, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		if why, ok := fail[req.Member]; ok {
			res.CouldNotProbe = "could not probe: " + why
			return res, nil
		}
		f := *base
		f.Network = facts.Network{Tested: true, Resolvers: []string{"127.0.0.11"}}
		net := func(check string, targets []string) []facts.NetResult {
			var out []facts.NetResult
			for _, tg := range targets {
				r := facts.NetResult{Check: check, Target: tg, Proto: "tcp", Status: facts.NetBlocked, Detail: "ETIMEDOUT", Ms: 1500}
				if reach[req.Member+" "+tg] {
					r.Status, r.Detail, r.Ms = facts.NetReachable, "", 1
				}
				out = append(out, r)
			}
			return out
		}
		f.Network.Egress = net("E-TCP-01", req.Targets.Egress)
		f.Network.Scorer = net("E-SCORE-01", req.Targets.Scorer)
		f.Network.Metadata = net("E-META-01", req.Targets.Metadata)
		for _, r := range net("E-DNS-02", req.Targets.DNS) {
			r.Proto, r.Via = "dns", "127.0.0.11"
			if r.Status == facts.NetReachable {
				r.Detail = "resolved to 192.0.2.53"
			}
			f.Network.DNS = append(f.Network.DNS, r)
		}
		res.Facts = &f
		return res, nil
	})
}

// fakeRecorder keeps what it is given.
type fakeRecorder struct {
	mu   sync.Mutex
	runs []verify.Result
}

func (r *fakeRecorder) Record(_ context.Context, res verify.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, res)
	return nil
}

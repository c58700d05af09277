package verify_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// TestEgressContactIsRepeated: a contact with the outside canary is repeated once. A routed
// agent reaches it again (weaker, exit 1); an isolated one that got through once, in the
// engine's isolation gap, does not: egress is then not scored, but the run cannot verify and
// says why (exit 3, never 0), and the first contact's canary log is not counted as evidence.
func TestEgressContactIsRepeated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		repeats bool
		exit    int
		want    string
	}{
		{"steady egress", true, verify.ExitWeaker, "N is N0, expected N2"},
		{"one transient contact", false, verify.ExitCouldNotRun, "reached the outside canary (198.51.100.1:100) once but not on a repeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reach := fakeProber(t, map[string]bool{"default 198.51.100.1:100": true}, nil)
			blocked := fakeProber(t, nil, nil)
			var mu sync.Mutex
			var calls []string
			prober := verify.ProberFunc(func(ctx context.Context, req verify.ProbeRequest) (probe.Result, error) {
				mu.Lock()
				n := len(calls)
				calls = append(calls, strings.Join(req.Targets.Egress, ","))
				mu.Unlock()
				if n == 0 || tc.repeats {
					return reach.Probe(ctx, req)
				}
				return blocked.Probe(ctx, req)
			})
			first := []canary.Event{{Kind: canary.KindTCP, Tag: canary.TagOf(verify.TargetEgress, "default"), Addr: "198.51.100.1:100",
				Remote: "198.51.100.9:4000", Time: time.Now()}}
			d := &fakeDriver{plan: twoServices, events: first}
			res := verify.Run(context.Background(), verify.Options{Spec: "testdata/spec.yaml", Expect: "T0.H1.N2"}, verify.Deps{Driver: d, Prober: prober})
			if res.Exit != tc.exit || !strings.Contains(res.Reason, tc.want) {
				t.Fatalf("exit %d, reason %q; want %d and %q", res.Exit, res.Reason, tc.exit, tc.want)
			}
			if len(calls) != 2 || calls[1] != "198.51.100.1:100" {
				t.Fatalf("probe calls %q; want the full probe, then only the reached canary again", calls)
			}
			var egress verify.Check
			for _, c := range res.Checks {
				if c.ID == "VFY-EGRESS" && c.Member == "default" {
					egress = c
				}
			}
			switch tc.repeats {
			case true:
				if egress.Status != verify.Reached || res.Measured.N != "N0" {
					t.Errorf("steady egress: check %+v, measured %s", egress, res.Measured)
				}
			default:
				if egress.Status != verify.NotReached || res.Measured.N != "N2" || strings.Contains(strings.Join(egress.Evidence, " "), "canary logged a connection") {
					t.Errorf("transient contact: check %+v, measured %s", egress, res.Measured)
				}
				if !strings.Contains(res.Reason, "DOCKER-ISOLATION-STAGE-1") {
					t.Errorf("the reason does not say what passes: %s", res.Reason)
				}
			}
		})
	}
}

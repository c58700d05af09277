package dockerstage_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/dockerstage"
)

// TestPlan: services in file order with their lines, markers and declared roles, the spec's
// expectation, and the deviations verify announces — without touching an engine.
func TestPlan(t *testing.T) {
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	d, err := dockerstage.New(dockerstage.Options{Backend: b, Canary: func() ([]byte, error) { return nil, errors.New("unused") }})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := d.Load(context.Background(), verify.LoadRequest{Spec: "testdata/plan.yaml", RunID: "r1", Project: "rkv-plan-r1"})
	if err != nil {
		t.Fatal(err)
	}
	p := sess.Plan()
	var got []string
	for _, s := range p.Services {
		got = append(got, strings.Join(strings.Fields(s.Name+" "+map[bool]string{true: "x-default"}[s.XDefault]+" "+s.DeclaredRole), " "))
	}
	if strings.Join(got, ",") != "target,attacker x-default,grader,ledger scorer" || p.Services[0].Line != 5 {
		t.Errorf("services %v (first at line %d)", got, p.Services[0].Line)
	}
	if p.Expect != "T0.H1.N2" || p.Project != "rkv-plan-r1" || sess.SandboxID() != b.SandboxID("rkv-plan-r1") {
		t.Errorf("expect %q project %q sandbox %q", p.Expect, p.Project, sess.SandboxID())
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"ports are not published during verify", "servers are replaced by verify's DNS canary"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if _, err := d.Load(context.Background(), verify.LoadRequest{Spec: "testdata/nope.yaml", RunID: "r2", Project: "x"}); !errors.Is(err, verify.ErrBadInput) {
		t.Errorf("missing spec: %v", err)
	}
}

// Package simfleet is a simulated backend for demos and load tests: it makes up Inspect-shaped
// sandboxes (Kubernetes-style Helm releases by default) and churns them with events, so the
// workbench can be shown and measured at thousands of rows without a cluster. Every sandbox it
// makes is marked Simulated and no action is supported.
package simfleet

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Backend is the simulated fleet.
type Backend struct {
	name  string
	kind  backends.Kind
	n     int
	every time.Duration // interval between churn events; 0 disables churn
	seed  int64
	now   func() time.Time
}

// New makes a simulated backend of kind with n sandboxes and one churn event per interval.
func New(name string, kind backends.Kind, n int, interval time.Duration) *Backend {
	return &Backend{name: name, kind: kind, n: n, every: interval, seed: 42, now: time.Now}
}

// Name is "<kind>:<name>".
func (b *Backend) Name() string { return string(b.kind) + ":" + b.name }

// Kind is the simulated kind.
func (b *Backend) Kind() backends.Kind { return b.kind }

// Unsupported explains that a simulation cannot act.
func (b *Backend) Unsupported(a backends.Action) string {
	return fmt.Sprintf("%s: not available on the SIMULATED %s range (demo data)", a, b.kind)
}

var tasks = []string{"ctf_web", "pwn_heap", "recon_osint", "crypto_rsa", "kernel_lpe", "cloud_iam"}

// Sandbox returns the i-th simulated sandbox at generation gen.
func (b *Backend) Sandbox(i, gen int) backends.Sandbox {
	task := tasks[i%len(tasks)]
	name := fmt.Sprintf("agent-env-%s-%05d", task[:4], i)
	created := b.now().Add(-time.Duration(i%720) * time.Minute)
	members := []backends.Member{
		{ID: name + "-default-0", Name: name + "-default-0", Service: "default", State: "Running", Running: true, Created: created},
		{ID: name + "-victim-0", Name: name + "-victim-0", Service: "victim", State: "Running", Running: true, Created: created},
	}
	if (i+gen)%17 == 0 {
		members[1].State, members[1].Running, members[1].Restarts = "CrashLoopBackOff", false, 3+gen%5
	}
	sb := backends.Sandbox{
		ID: b.Name() + "/inspect/" + name, Name: name, Backend: b.kind, Endpoint: b.Name(),
		Created: created, Task: task, Sample: fmt.Sprintf("sample-%04d", i%1000), Inspect: true,
		Actionable: true, Simulated: true, Members: members,
		Extra: []backends.KeyValue{{Key: "namespace", Value: "inspect"}, {Key: "note", Value: "SIMULATED demo data"}},
	}
	switch i % 9 {
	case 0:
		sb.Findings = []backends.Finding{{RuleID: "K8S-H01", Severity: catalog.SeverityCritical, Axis: catalog.AxisHost, Message: "privileged container (simulated)"}}
	case 3:
		sb.Findings = []backends.Finding{{RuleID: "HELM-N01", Severity: catalog.SeverityHigh, Axis: catalog.AxisNetwork, Message: `allowDomains: ["*"] (simulated)`}}
	}
	sb.Status = backends.DeriveStatus(sb.Members)
	return sb
}

// Watch lists the fleet, then changes one sandbox per interval until ctx ends.
func (b *Backend) Watch(ctx context.Context, emit func(backends.Event)) error {
	list := make([]backends.Sandbox, b.n)
	for i := range list {
		list[i] = b.Sandbox(i, 0)
	}
	emit(backends.Event{Type: backends.EventReset, Sandboxes: list})
	if b.every <= 0 {
		<-ctx.Done()
		return nil
	}
	rng := rand.New(rand.NewSource(b.seed))
	t := time.NewTicker(b.every)
	defer t.Stop()
	for gen := 1; ; gen++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			emit(backends.Event{Type: backends.EventUpsert, Sandbox: b.Sandbox(rng.Intn(b.n), gen)})
		}
	}
}

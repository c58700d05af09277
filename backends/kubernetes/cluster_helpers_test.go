package kubernetes

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/helmrelease"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/client-go/rest"
)

// release describes one Helm release a test installs from the real agent-env chart.
type release struct {
	name     string
	task     string // empty: installed without Inspect's labels and annotations
	sample   string
	services []string // default: just "default"
	values   map[string]any
}

// newReleaseName mimics Inspect's shortuuid()[:8] release names.
func newReleaseName() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// install runs a Helm SDK install of the agent-env chart the way Inspect's helm install does:
// release label inspectSandbox=true, annotations.inspectTaskName, labels.inspectSampleUUID.
func install(t testing.TB, b *Backend, ns string, r release) {
	t.Helper()
	chrt, err := loader.Load(agentEnvChart)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	cfg, err := helmClient(t, b.rc).Configuration(ns)
	if err != nil {
		t.Fatalf("helm config: %v", err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = r.name, ns
	in.WaitStrategy = kube.HookOnlyStrategy // the tests wait on the backend's own view instead
	in.Timeout = 2 * time.Minute
	vals := map[string]any{}
	for k, v := range r.values {
		vals[k] = v
	}
	if len(r.services) > 0 {
		svcs := map[string]any{}
		for _, s := range r.services {
			svcs[s] = map[string]any{"image": "python:3.12-bookworm", "command": []any{"tail", "-f", "/dev/null"}}
		}
		vals["services"] = svcs
	}
	if r.task != "" {
		in.Labels = map[string]string{HelmInspectFlag: "true"}
		vals["annotations"] = map[string]any{AnnotationTask: r.task}
		vals["labels"] = map[string]any{LabelSample: r.sample, "dev.rangekeeper.test": "1"}
	} else {
		vals["labels"] = map[string]any{"dev.rangekeeper.test": "1"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := in.RunWithContext(ctx, chrt, vals); err != nil {
		t.Fatalf("helm install %s/%s: %v", ns, r.name, err)
	}
}

// fleet applies a backend's events the way the supervisor does and lets tests wait on it.
type fleet struct {
	mu      sync.Mutex
	byID    map[string]backends.Sandbox
	events  []backends.Event
	changed chan struct{}
}

func newFleet() *fleet {
	return &fleet{byID: map[string]backends.Sandbox{}, changed: make(chan struct{}, 1)}
}

func (f *fleet) emit(e backends.Event) {
	f.mu.Lock()
	f.events = append(f.events, e)
	switch e.Type {
	case backends.EventReset:
		f.byID = map[string]backends.Sandbox{}
		for _, sb := range e.Sandboxes {
			f.byID[sb.ID] = sb
		}
	case backends.EventUpsert:
		f.byID[e.Sandbox.ID] = e.Sandbox
	case backends.EventRemove:
		delete(f.byID, e.ID)
	}
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// wait blocks until cond holds on the current fleet, failing the test after timeout.
func (f *fleet) wait(t testing.TB, timeout time.Duration, what string, cond func(map[string]backends.Sandbox) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		ok := cond(f.byID)
		snapshot := fmt.Sprint(len(f.byID))
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.changed:
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s (fleet has %s sandboxes)", timeout, what, snapshot)
		}
	}
}

func (f *fleet) get(id string) (backends.Sandbox, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, ok := f.byID[id]
	return sb, ok
}

// watch runs b.Watch into f until the test ends; the returned channel yields Watch's result.
func watch(t testing.TB, b *Backend, f *fleet) (<-chan error, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() { done <- b.Watch(ctx, f.emit); close(finished) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Errorf("Watch did not return after cancel")
		}
	})
	return done, cancel
}

// settled is allRunning with the complete posture: the first reset may come before the
// CiliumNetworkPolicies have listed, with the network findings still pending.
func settled(sb backends.Sandbox, n int) bool { return sb.PosturePending == "" && allRunning(sb, n) }

// allRunning reports whether the release has n members, all running.
func allRunning(sb backends.Sandbox, n int) bool {
	if len(sb.Members) != n {
		return false
	}
	for _, m := range sb.Members {
		if !m.Running {
			return false
		}
	}
	return true
}

// testBackend is a backend on the test cluster restricted to one namespace.
func testBackend(t testing.TB, c *kubetest.Cluster, rc *rest.Config, ns string) *Backend {
	t.Helper()
	if rc == nil {
		rc = c.Config
	}
	b, err := NewForConfig("envtest", rc, Options{Namespaces: []string{ns}, Uninstaller: helmClient(t, rc)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// helmClient runs the Helm SDK in the test's process: the helper binary's own path is
// TestClusterTeardownThroughTheHelmHelper's.
func helmClient(t testing.TB, rc *rest.Config) *helmrelease.Client {
	t.Helper()
	c, err := helmrelease.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tcpProxy sits between a backend and the API server so a test can cut every connection
// (a dropped watch) or refuse new ones (an unreachable API server). Loopback only.
type tcpProxy struct {
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

func newTCPProxy(t testing.TB, target string) *tcpProxy {
	p := &tcpProxy{target: target, conns: map[net.Conn]struct{}{}}
	if err := p.listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return nil
}

func (p *tcpProxy) serve(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

// dropAll cuts every open connection; new ones are still accepted.
func (p *tcpProxy) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// stop refuses new connections and cuts the open ones.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.mu.Unlock()
	p.dropAll()
}

// restart listens again on the same address.
func (p *tcpProxy) restart() error { return p.listen(p.addr) }

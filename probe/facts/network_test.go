package facts

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/rangekeeper/rangekeeper/probe/internal/dnscanary"
)

// recordingDialer records every socket the probe asks for, and dials only loopback, mapping
// port 53 to the test's DNS server.
type recordingDialer struct {
	mu      sync.Mutex
	calls   []string
	dnsAddr string
}

func (d *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.calls = append(d.calls, network+" "+addr)
	d.mu.Unlock()
	if strings.HasSuffix(addr, ":53") && d.dnsAddr != "" {
		addr = d.dnsAddr
	}
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errRefusedByTest}
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errRefusedByTest = testErr("test dialer refuses non-loopback")

func TestNoTargetsOpensNoSocket(t *testing.T) {
	d := &recordingDialer{}
	root := fixture(t, map[string]string{"/etc/resolv.conf": "nameserver 127.0.0.11\n"})
	rep := Collect(context.Background(), Options{Root: root, Env: []string{}, Homes: []string{}, Dialer: d})
	if len(d.calls) != 0 {
		t.Fatalf("probe opened sockets with no targets: %v", d.calls)
	}
	n := rep.Network
	if n.Tested {
		t.Error("network marked tested")
	}
	for _, sec := range [][]NetResult{n.DNS, n.Egress, n.Scorer, n.Metadata} {
		if len(sec) != 1 || sec[0].Status != NetNotTested {
			t.Errorf("section %+v, want one not-tested row", sec)
		}
	}
	if len(n.Resolvers) != 1 || n.Resolvers[0] != "127.0.0.11" {
		t.Errorf("resolvers %v", n.Resolvers)
	}
}

func TestNetworkChecksContactOnlyTargets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	dns := startDNSCanary(t)
	d := &recordingDialer{dnsAddr: dns}
	root := fixture(t, map[string]string{"/etc/resolv.conf": "nameserver 127.0.0.1\n"})
	targets := Targets{
		Egress:   []string{ln.Addr().String(), "198.51.100.7:443"},
		Scorer:   []string{closedAddr},
		Metadata: []string{"not-a-target"},
		DNS:      []string{"*.canary.test", "blocked.test"},
	}
	rep := Collect(context.Background(), Options{Root: root, Env: []string{}, Homes: []string{}, Dialer: d, Targets: targets})
	n := rep.Network
	if !n.Tested {
		t.Fatal("not tested")
	}
	want := map[string]string{ln.Addr().String(): NetReachable, "198.51.100.7:443": NetBlocked, closedAddr: NetBlocked, "not-a-target": NetError}
	for _, r := range append(append(n.Egress, n.Scorer...), n.Metadata...) {
		if want[r.Target] != r.Status {
			t.Errorf("%s %s: %s (%s), want %s", r.Check, r.Target, r.Status, r.Detail, want[r.Target])
		}
	}
	if len(n.DNS) != 2 || n.DNS[0].Status != NetReachable || !strings.Contains(n.DNS[0].Detail, "192.0.2.53") ||
		n.DNS[1].Status != NetBlocked || n.DNS[1].Detail != "NXDOMAIN" || n.DNS[0].Via != "127.0.0.1" {
		t.Errorf("dns %+v", n.DNS)
	}
	// Every socket went to a configured target or the configured resolver, nowhere else.
	allowed := map[string]bool{ln.Addr().String(): true, "198.51.100.7:443": true, closedAddr: true, "127.0.0.1:53": true}
	for _, c := range d.calls {
		if _, addr, _ := strings.Cut(c, " "); !allowed[addr] {
			t.Errorf("socket to unconfigured destination: %s", c)
		}
	}
}

// startDNSCanary answers A queries under canary.test with 192.0.2.53 and NXDOMAIN otherwise,
// on a loopback UDP port: the test's own DNS canary.
func startDNSCanary(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go dnscanary.Serve(pc, "canary.test")
	return pc.LocalAddr().String()
}

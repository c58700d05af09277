package facts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"strings"
	"time"
)

// Dialer is the only way the probe opens sockets; tests substitute one that records calls.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

func defaultDialer() Dialer { return &net.Dialer{} }

// DefaultTimeout bounds each network check when the targets give none.
const DefaultTimeout = 1500 * time.Millisecond

// notTestedNetwork fills every section with "not tested" rows so absence is explicit.
func notTestedNetwork(t Targets, resolvers []string) Network {
	return Network{Tested: false, Resolvers: nonNil(resolvers),
		DNS:      []NetResult{{Check: "E-DNS-02", Status: NetNotTested, Detail: "no DNS canary configured"}},
		Egress:   []NetResult{{Check: "E-TCP-01", Status: NetNotTested, Detail: "no egress canary configured"}},
		Scorer:   []NetResult{{Check: "E-SCORE-01", Status: NetNotTested, Detail: "no scorer endpoint configured"}},
		Metadata: []NetResult{{Check: "E-META-01", Status: NetNotTested, Detail: "no metadata endpoint configured"}},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// network runs E-DNS-01/02, E-TCP-01, E-UDP-01, E-V6-01, E-SCORE-01 and E-META-01 against the
// configured targets only, sequentially, each with a short timeout. No target: no socket.
func (c *collector) network(ctx context.Context) {
	n := &c.report.Network
	rc, _ := c.read("/etc/resolv.conf")
	for _, line := range strings.Split(rc, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			n.Resolvers = append(n.Resolvers, f[1])
		}
	}
	if6, _ := c.read("/proc/net/if_inet6")
	for _, line := range strings.Split(if6, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[3] == "00" && !strings.HasPrefix(f[0], "fe80") { // scope 00 = global
			n.IPv6 = true
		}
	}
	t := c.opt.Targets
	if t.Empty() {
		*n = mergeNotTested(*n, t)
		return
	}
	n.Tested = true
	timeout := DefaultTimeout
	if t.TimeoutMS > 0 {
		timeout = time.Duration(t.TimeoutMS) * time.Millisecond
	}
	n.DNS = c.dnsChecks(ctx, t.DNS, n.Resolvers, timeout)
	n.Egress = c.connectChecks(ctx, "E-TCP-01", t.Egress, timeout)
	n.Scorer = c.connectChecks(ctx, "E-SCORE-01", t.Scorer, timeout)
	n.Metadata = c.connectChecks(ctx, "E-META-01", t.Metadata, timeout)
	nt := notTestedNetwork(t, nil)
	for _, pair := range []struct{ dst, def *[]NetResult }{{&n.DNS, &nt.DNS}, {&n.Egress, &nt.Egress}, {&n.Scorer, &nt.Scorer}, {&n.Metadata, &nt.Metadata}} {
		if len(*pair.dst) == 0 {
			*pair.dst = *pair.def
		}
	}
}

func mergeNotTested(n Network, t Targets) Network {
	nt := notTestedNetwork(t, n.Resolvers)
	nt.IPv6 = n.IPv6
	return nt
}

func (c *collector) connectChecks(ctx context.Context, check string, targets []string, timeout time.Duration) []NetResult {
	var out []NetResult
	for _, target := range targets {
		proto, addr := "tcp", target
		if rest, ok := strings.CutPrefix(target, "udp:"); ok {
			proto, addr = "udp", rest
		} else if rest, ok := strings.CutPrefix(target, "tcp:"); ok {
			addr = rest
		}
		r := NetResult{Check: check, Target: addr, Proto: proto}
		if proto == "udp" && check == "E-TCP-01" {
			r.Check = "E-UDP-01"
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			r.Status, r.Detail = NetError, "target is not host:port"
			out = append(out, r)
			continue
		}
		if ctx.Err() != nil {
			r.Status, r.Detail = NetNotTested, "deadline reached"
			out = append(out, r)
			continue
		}
		start := time.Now()
		dctx, cancel := context.WithTimeout(ctx, timeout)
		conn, err := c.opt.Dialer.DialContext(dctx, proto, addr)
		cancel()
		r.Ms = time.Since(start).Milliseconds()
		if err != nil {
			r.Status, r.Detail = NetBlocked, netErrClass(err)
		} else {
			r.Status = NetReachable
			if proto == "udp" {
				// UDP has no handshake: send one nonce datagram; only the canary can confirm receipt.
				_, _ = conn.Write([]byte("rangekeeper-probe " + nonce() + "\n"))
				r.Status, r.Detail = NetReachable, "datagram sent (unconfirmed: check the canary log)"
			}
			conn.Close()
		}
		out = append(out, r)
	}
	return out
}

// dnsChecks is E-DNS-02: each canary name through each resolver explicitly, UDP with the Go
// resolver. A name that resolves is an open DNS channel to the outside.
func (c *collector) dnsChecks(ctx context.Context, names, resolvers []string, timeout time.Duration) []NetResult {
	var out []NetResult
	if len(names) > 0 && len(resolvers) == 0 {
		return []NetResult{{Check: "E-DNS-02", Status: NetNotTested, Detail: "no nameserver in /etc/resolv.conf"}}
	}
	for _, name := range names {
		qname := strings.ReplaceAll(name, "*", nonce())
		for _, ns := range resolvers {
			server := net.JoinHostPort(ns, "53")
			res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return c.opt.Dialer.DialContext(ctx, network, server)
			}}
			r := NetResult{Check: "E-DNS-02", Target: name, Proto: "dns", Via: ns}
			if ctx.Err() != nil {
				r.Status, r.Detail = NetNotTested, "deadline reached"
				out = append(out, r)
				continue
			}
			start := time.Now()
			lctx, cancel := context.WithTimeout(ctx, timeout)
			addrs, err := res.LookupHost(lctx, qname)
			cancel()
			r.Ms = time.Since(start).Milliseconds()
			if err != nil {
				r.Status, r.Detail = NetBlocked, dnsErrClass(err)
			} else {
				r.Status, r.Detail = NetReachable, "resolved to "+strings.Join(addrs, ",")
			}
			out = append(out, r)
		}
	}
	return out
}

func nonce() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func netErrClass(err error) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return "ETIMEDOUT"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "DNS: " + dnsErrClass(err)
	}
	return errName(err)
}

func dnsErrClass(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		switch {
		case dnsErr.IsNotFound:
			return "NXDOMAIN"
		case dnsErr.IsTimeout:
			return "timeout"
		}
		return "SERVFAIL/REFUSED"
	}
	return errName(err)
}

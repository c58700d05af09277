// Package dnscanary is a tiny DNS responder for tests: it answers A queries for names under a
// canary zone with a sentinel address and NXDOMAIN for everything else, so a probe's E-DNS-02
// check can be exercised without any query leaving the test's own hosts.
package dnscanary

import (
	"encoding/binary"
	"net"
	"strings"
)

// Sentinel is the documentation address (RFC 5737) every canary name resolves to.
var Sentinel = [4]byte{192, 0, 2, 53}

// Answer builds the response to query q, or nil when q is not a parseable question.
func Answer(q []byte, zone string) []byte {
	if len(q) < 12 {
		return nil
	}
	i := 12
	var labels []string
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if l > 63 || i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	question := q[12 : i+5]
	name := strings.ToLower(strings.Join(labels, "."))
	match := strings.HasSuffix(name, "."+strings.ToLower(zone)) || name == strings.ToLower(zone)
	rcode := byte(0)
	if !match {
		rcode = 3 // NXDOMAIN
	}
	ancount := uint16(0)
	if match && qtype == 1 {
		ancount = 1
	}
	resp := append([]byte{}, q[:2]...)
	resp = append(resp, 0x81, 0x80|rcode, 0, 1, byte(ancount>>8), byte(ancount), 0, 0, 0, 0)
	resp = append(resp, question...)
	if ancount == 1 {
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, Sentinel[:]...)
	}
	return resp
}

// Serve answers queries on pc until it is closed.
func Serve(pc net.PacketConn, zone string) {
	buf := make([]byte, 512)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := Answer(buf[:n], zone); resp != nil {
			_, _ = pc.WriteTo(resp, addr)
		}
	}
}

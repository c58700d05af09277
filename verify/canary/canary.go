// Package canary is the listener verify plants where a sandbox must not reach — outside its
// networks, on the host side of its bridges, inside the scorer — and the log format it reports
// in. The program (cmd/rangekeeper-canary) accepts TCP connections and answers DNS for one zone,
// writing one JSON event per contact; it never initiates traffic except in check mode, where it
// dials only the addresses it is given (verify's own controls).
package canary

import (
	"bufio"
	"encoding/json"
	"io"
	"net/netip"
	"strings"
	"time"
)

// Event kinds.
const (
	KindListening = "listening" // a listener is up (Addr, Tag)
	KindReady     = "ready"     // every listener is up
	KindTCP       = "tcp"       // a connection was accepted (Addr, Tag, Remote)
	KindDNS       = "dns"       // a query arrived (Name, Remote, OK: inside the zone)
	KindDial      = "dial"      // check mode: a dial (Addr, OK, Detail)
	KindLookup    = "lookup"    // check mode: a lookup through a server (Addr, Name, OK, Detail)
	KindError     = "error"     // something failed (Detail)
)

// Sentinel is the address every name in the canary zone resolves to (RFC 5737 TEST-NET-1), so a
// resolved canary name can never be mistaken for a real answer.
var Sentinel = netip.MustParseAddr("192.0.2.53")

// Event is one line of a canary's log.
type Event struct {
	Time   time.Time `json:"t"`
	Kind   string    `json:"kind"`
	Tag    string    `json:"tag,omitempty"`
	Addr   string    `json:"addr,omitempty"`
	Remote string    `json:"remote,omitempty"`
	Name   string    `json:"name,omitempty"`
	OK     bool      `json:"ok,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// ParseEvents reads a canary log, skipping lines that are not events (e.g. engine noise).
func ParseEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// TagOf returns the tag verify gives one probed member's listeners, so every contact is
// attributed to the member that made it.
func TagOf(kind, member string) string { return kind + ":" + member }

// InZone reports whether name (with or without the trailing dot) is zone or below it.
func InZone(name, zone string) bool {
	n := strings.ToLower(strings.TrimSuffix(name, "."))
	z := strings.ToLower(strings.TrimSuffix(zone, "."))
	return n == z || strings.HasSuffix(n, "."+z)
}

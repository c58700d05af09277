package canary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// Listener is one TCP address to accept on, tagged for attribution.
type Listener struct {
	Addr string
	Tag  string
}

// ServeConfig is what one canary serves.
type ServeConfig struct {
	TCP  []Listener
	DNS  string // UDP and TCP address for the DNS responder ("" = none)
	Zone string // names at or below Zone resolve to Sentinel; others are refused
}

// logger writes events as JSON lines; safe for concurrent use.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) emit(e Event) {
	e.Time = time.Now().UTC()
	b, _ := json.Marshal(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}

// Serve listens on every configured address, logs each contact to w and runs until ctx ends.
// A listener that cannot bind is an error before anything is served, so the caller learns at
// once that the canary is blind.
func Serve(ctx context.Context, cfg ServeConfig, w io.Writer) error {
	log := &logger{w: w}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	for _, l := range cfg.TCP {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			log.emit(Event{Kind: KindError, Tag: l.Tag, Addr: l.Addr, Detail: err.Error()})
			return err
		}
		closers = append(closers, ln)
		log.emit(Event{Kind: KindListening, Tag: l.Tag, Addr: ln.Addr().String()})
		wg.Add(1)
		go func(ln net.Listener, tag string) {
			defer wg.Done()
			acceptTCP(ln, tag, log)
		}(ln, l.Tag)
	}
	if cfg.DNS != "" {
		pc, err := net.ListenPacket("udp", cfg.DNS)
		if err != nil {
			log.emit(Event{Kind: KindError, Tag: "dns", Addr: cfg.DNS, Detail: err.Error()})
			return err
		}
		closers = append(closers, pc)
		ln, err := net.Listen("tcp", cfg.DNS)
		if err != nil {
			log.emit(Event{Kind: KindError, Tag: "dns", Addr: cfg.DNS, Detail: err.Error()})
			return err
		}
		closers = append(closers, ln)
		log.emit(Event{Kind: KindListening, Tag: "dns", Addr: pc.LocalAddr().String()})
		wg.Add(2)
		go func() { defer wg.Done(); serveUDP(pc, cfg.Zone, log) }()
		go func() { defer wg.Done(); serveDNSOverTCP(ln, cfg.Zone, log) }()
	}
	log.emit(Event{Kind: KindReady})
	<-ctx.Done()
	for _, c := range closers {
		c.Close()
	}
	closers = nil
	wg.Wait()
	return nil
}

func acceptTCP(ln net.Listener, tag string, log *logger) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		log.emit(Event{Kind: KindTCP, Tag: tag, Addr: c.LocalAddr().String(), Remote: c.RemoteAddr().String()})
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte("rangekeeper-canary\n"))
		c.Close()
	}
}

func serveUDP(pc net.PacketConn, zone string, log *logger) {
	buf := make([]byte, 1500)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := answer(buf[:n], zone, addr.String(), log); resp != nil {
			_, _ = pc.WriteTo(resp, addr)
		}
	}
}

func serveDNSOverTCP(ln net.Listener, zone string, log *logger) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func(c net.Conn) {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			var hdr [2]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			q := make([]byte, int(hdr[0])<<8|int(hdr[1]))
			if _, err := io.ReadFull(c, q); err != nil {
				return
			}
			if resp := answer(q, zone, c.RemoteAddr().String(), log); resp != nil {
				_, _ = c.Write(append([]byte{byte(len(resp) >> 8), byte(len(resp))}, resp...))
			}
		}(c)
	}
}

// answer builds the reply to one query and logs it: A for names in the zone (the sentinel),
// an empty answer for other types in the zone, REFUSED outside it (the canary never recurses).
func answer(q []byte, zone, remote string, log *logger) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	question, err := p.Question()
	if err != nil {
		return nil
	}
	name := question.Name.String()
	in := InZone(name, zone)
	log.emit(Event{Kind: KindDNS, Name: strings.TrimSuffix(name, "."), Remote: remote, OK: in, Detail: strings.TrimPrefix(question.Type.String(), "Type")})
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: in, RecursionDesired: h.RecursionDesired}
	if !in {
		rh.RCode = dnsmessage.RCodeRefused
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(question) != nil {
		return nil
	}
	if in && question.Type == dnsmessage.TypeA {
		if b.StartAnswers() != nil {
			return nil
		}
		rr := dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET, TTL: 0}
		if b.AResource(rr, dnsmessage.AResource{A: Sentinel.As4()}) != nil {
			return nil
		}
	}
	resp, err := b.Finish()
	if err != nil {
		return nil
	}
	return resp
}

// CheckConfig is one control run: what to dial and what to look up through which server.
type CheckConfig struct {
	Dial    []string
	DNS     string // server address host:port
	Name    string // name to look up through DNS
	Timeout time.Duration
}

// Check dials and looks up what it is told — verify's positive and negative controls — and
// logs each outcome. It contacts nothing else.
func Check(ctx context.Context, cfg CheckConfig, w io.Writer) {
	log := &logger{w: w}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	// Every contact runs at once: the negative control waits out each timeout, and they add up.
	var wg sync.WaitGroup
	for _, addr := range cfg.Dial {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			c, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
			cancel()
			e := Event{Kind: KindDial, Addr: addr, OK: err == nil}
			if err != nil {
				e.Detail = err.Error()
			} else {
				c.Close()
			}
			log.emit(e)
		}()
	}
	if cfg.DNS != "" && cfg.Name != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.emit(lookup(ctx, cfg))
		}()
	}
	wg.Wait()
}

func lookup(ctx context.Context, cfg CheckConfig) Event {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, cfg.DNS)
	}}
	lctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	addrs, err := r.LookupHost(lctx, cfg.Name)
	cancel()
	e := Event{Kind: KindLookup, Addr: cfg.DNS, Name: cfg.Name}
	switch {
	case err != nil:
		e.Detail = err.Error()
	case len(addrs) > 0 && addrs[0] == Sentinel.String():
		e.OK, e.Detail = true, "resolved to the sentinel"
	default:
		e.Detail = fmt.Sprintf("resolved to %v, not the sentinel", addrs)
	}
	return e
}

// ErrUsage is a bad command line.
var ErrUsage = errors.New("usage: rangekeeper-canary serve [--tcp ADDR=TAG]... [--dns ADDR --zone ZONE] | check [--dial ADDR]... [--dns ADDR --name NAME]")

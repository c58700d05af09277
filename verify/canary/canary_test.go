package canary

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// syncBuffer is a bytes.Buffer safe for the canary's goroutines and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) events(t *testing.T) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, err := ParseEvents(bytes.NewReader(s.b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeAndCheck runs a canary and a control against it on loopback: the control's dial and
// lookup succeed, and the canary logs both contacts with the listener's tag.
func TestServeAndCheck(t *testing.T) {
	tcpAddr, dnsAddr := freePort(t), freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	var log syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{TCP: []Listener{{Addr: tcpAddr, Tag: TagOf("egress", "default")}}, DNS: dnsAddr, Zone: "v-1.rangekeeper.invalid"}, &log)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !hasKind(log.events(t), KindReady) {
		if time.Now().After(deadline) {
			t.Fatal("canary never ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var out syncBuffer
	Check(context.Background(), CheckConfig{Dial: []string{tcpAddr}, DNS: dnsAddr, Name: "x.default.v-1.rangekeeper.invalid"}, &out)
	checks := out.events(t)
	ok := map[string]bool{}
	for _, e := range checks {
		ok[e.Kind] = e.OK
	}
	if len(checks) != 2 || !ok[KindDial] || !ok[KindLookup] {
		t.Fatalf("check events: %+v", checks)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var tcp, dns int
	for _, e := range log.events(t) {
		switch e.Kind {
		case KindTCP:
			tcp++
			if e.Tag != "egress:default" || !strings.HasPrefix(e.Remote, "127.0.0.1:") {
				t.Errorf("tcp event %+v", e)
			}
		case KindDNS:
			dns++
			if !e.OK || e.Name != "x.default.v-1.rangekeeper.invalid" {
				t.Errorf("dns event %+v", e)
			}
		}
	}
	if tcp != 1 || dns == 0 {
		t.Errorf("logged %d tcp and %d dns contacts", tcp, dns)
	}
}

func TestServeFailsWhenAListenerCannotBind(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var log syncBuffer
	err = Serve(context.Background(), ServeConfig{TCP: []Listener{{Addr: ln.Addr().String(), Tag: "x"}}}, &log)
	if err == nil || !hasKind(log.events(t), KindError) {
		t.Fatalf("err %v, events %+v", err, log.events(t))
	}
}

func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		qtype dnsmessage.Type
		rcode dnsmessage.RCode
		as    int
	}{
		{"a.zone.invalid.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1},
		{"ZONE.invalid.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1},
		{"a.zone.invalid.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, 0},
		{"example.com.", dnsmessage.TypeA, dnsmessage.RCodeRefused, 0},
		{"notzone.invalid.", dnsmessage.TypeA, dnsmessage.RCodeRefused, 0},
	} {
		t.Run(tc.name+tc.qtype.String(), func(t *testing.T) {
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
			_ = b.StartQuestions()
			_ = b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(tc.name), Type: tc.qtype, Class: dnsmessage.ClassINET})
			q, _ := b.Finish()
			var log syncBuffer
			resp := answer(q, "zone.invalid", "192.0.2.1:5353", &logger{w: &log})
			var m dnsmessage.Message
			if err := m.Unpack(resp); err != nil {
				t.Fatal(err)
			}
			if m.ID != 7 || m.RCode != tc.rcode || len(m.Answers) != tc.as {
				t.Fatalf("id %d rcode %v answers %d", m.ID, m.RCode, len(m.Answers))
			}
			if tc.as == 1 && m.Answers[0].Body.(*dnsmessage.AResource).A != Sentinel.As4() {
				t.Errorf("answer %v", m.Answers[0].Body)
			}
			ev := log.events(t)
			if len(ev) != 1 || ev[0].Kind != KindDNS || ev[0].Remote != "192.0.2.1:5353" {
				t.Errorf("logged %+v", ev)
			}
		})
	}
	var log syncBuffer
	if answer([]byte{1, 2, 3}, "zone", "r", &logger{w: &log}) != nil {
		t.Error("garbage must get no answer")
	}
}

func TestParseEventsSkipsNoise(t *testing.T) {
	in := "engine noise\n{\"kind\":\"tcp\",\"tag\":\"a\"}\n{not json\n{\"t\":\"2026-01-01T00:00:00Z\"}\n"
	ev, err := ParseEvents(strings.NewReader(in))
	if err != nil || len(ev) != 1 || ev[0].Tag != "a" {
		t.Fatalf("%v %+v", err, ev)
	}
}

func hasKind(ev []Event, kind string) bool {
	for _, e := range ev {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

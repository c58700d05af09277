// Package pvesim is an in-memory simulator of the Proxmox VE API (/api2/json) for tests and the
// demo: stateful VMs, snapshots, async tasks with real UPIDs, a scriptable guest agent, SDN, PVE's
// auth and error shapes, and fault injection. It is held to the published schema by tests.
package pvesim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configures a simulator. The zero value is a single node "pve" with one API token.
type Options struct {
	Node      string // node name (default "pve")
	TLS       bool   // serve HTTPS with httptest's self-signed certificate
	TokenID   string // API token id USER@REALM!NAME (default "rangekeeper@pve!sim")
	User      string // ticket user (default "root@pam")
	Password  string // ticket password; empty disables ticket login
	TaskDelay time.Duration
	// Faults are injected on every request except the ticket login.
	Faults Faults
	// Record, when set, sees every request the simulator answered (for schema checks in tests).
	Record func(Exchange)
	// UnauthorizedDelay mirrors PVE's 3 s delay of unauthenticated calls (0 in tests).
	UnauthorizedDelay time.Duration
}

// Faults are the fault-injection knobs.
type Faults struct {
	Latency   time.Duration // added before every answer
	Jitter    time.Duration // uniform extra latency in [0, Jitter)
	ErrorRate float64       // probability of a 500 "injected fault" before the handler runs
	DropRate  float64       // probability the connection is closed after the handler ran (answer lost)
	Seed      uint64        // for reproducible fault sequences (0 = random)
}

// Exchange is one answered request, as recorded for schema checks.
type Exchange struct {
	Method   string
	Route    string         // the schema path template, e.g. /nodes/{node}/qemu/{vmid}/config
	Params   map[string]any // merged query + body parameters, path variables excluded
	Status   int
	Response json.RawMessage // the "data" member of a 2xx answer
}

// Server is a running simulator.
type Server struct {
	opts    Options
	secret  string // token secret, random per server
	hmacKey []byte
	http    *httptest.Server
	routes  []route

	faultMu sync.Mutex
	rng     *mrand.Rand

	mu    sync.Mutex
	st    *state
	tasks sync.WaitGroup
	done  chan struct{}
	once  sync.Once
}

// Start creates and starts a simulator on a loopback listener (httptest binds 127.0.0.1).
func Start(opts Options) *Server {
	s := newServer(opts)
	if opts.TLS {
		s.http = httptest.NewTLSServer(s)
	} else {
		s.http = httptest.NewServer(s)
	}
	return s
}

func newServer(opts Options) *Server {
	if opts.Node == "" {
		opts.Node = "pve"
	}
	if opts.TokenID == "" {
		opts.TokenID = "rangekeeper@pve!sim"
	}
	if opts.User == "" {
		opts.User = "root@pam"
	}
	if opts.TaskDelay == 0 {
		opts.TaskDelay = 20 * time.Millisecond
	}
	seed := opts.Faults.Seed
	if seed == 0 {
		n, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
		seed = n.Uint64()
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sec := make([]byte, 16)
	_, _ = rand.Read(sec)
	s := &Server{
		opts:    opts,
		secret:  formatUUID(sec),
		hmacKey: key,
		rng:     mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		st:      newState(opts.Node),
		done:    make(chan struct{}),
	}
	s.routes = s.table()
	return s
}

func formatUUID(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// URL is the API base to give go-proxmox: "<scheme>://127.0.0.1:<port>/api2/json".
func (s *Server) URL() string { return s.http.URL + "/api2/json" }

// TokenID is the accepted API token id.
func (s *Server) TokenID() string { return s.opts.TokenID }

// TokenSecret is the accepted API token secret (random per server).
func (s *Server) TokenSecret() string { return s.secret }

// Node is the simulated node's name.
func (s *Server) Node() string { return s.opts.Node }

// HTTPClient returns a client that trusts the server's certificate (TLS) or a plain client.
func (s *Server) HTTPClient() *http.Client { return s.http.Client() }

// Certificate returns the DER bytes of the TLS certificate, or nil for plain HTTP.
func (s *Server) Certificate() []byte {
	if c := s.http.Certificate(); c != nil {
		return c.Raw
	}
	return nil
}

// SetFaults changes the fault knobs while running.
func (s *Server) SetFaults(f Faults) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	seed := s.opts.Faults.Seed
	s.opts.Faults = f
	if f.Seed != 0 && f.Seed != seed {
		s.rng = mrand.New(mrand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	}
}

// Close stops the server and waits for running tasks to finish.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		if s.http != nil {
			s.http.CloseClientConnections()
			s.http.Close()
		}
		s.tasks.Wait()
	})
}

// apiError is an error answered with PVE's status and envelope.
type apiError struct {
	status int
	msg    string
	errs   map[string]string
}

func (e *apiError) Error() string { return e.msg }

// fail500 is a handler error ("die" in PVE): 500 with the message and PVE's trailing newline.
func fail500(format string, a ...any) error {
	return &apiError{status: 500, msg: fmt.Sprintf(format, a...)}
}

// paramErr is raise_param_exc: 400 "Parameter verification failed." with an errors map.
func paramErr(errs map[string]string) error {
	return &apiError{status: 400, msg: "Parameter verification failed.", errs: errs}
}

func permErr(path, priv string) error {
	return &apiError{status: 403, msg: fmt.Sprintf("Permission check failed (%s, %s)", path, priv)}
}

// withTotal adds PVE's top-level "total" next to "data".
type withTotal struct {
	data  any
	total int
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, "/api2/json")
	if !ok {
		writeErr(w, &apiError{status: 501, msg: fmt.Sprintf("Method '%s %s' not implemented", r.Method, r.URL.Path)})
		return
	}
	rt, vars := s.match(r.Method, path)
	if rt == nil {
		writeErr(w, &apiError{status: 501, msg: fmt.Sprintf("Method '%s %s' not implemented", r.Method, path)})
		return
	}
	if rt.pattern != "/access/ticket" && !s.injectBefore(w) {
		return
	}
	params, perr := readParams(r)
	if perr != nil {
		writeErr(w, perr)
		return
	}
	c := &call{srv: s, r: r, vars: vars, params: params, route: rt.pattern}
	if rt.pattern != "/access/ticket" || r.Method != http.MethodPost {
		user, aerr := s.authenticate(r)
		if aerr != nil {
			if s.opts.UnauthorizedDelay > 0 {
				select {
				case <-time.After(s.opts.UnauthorizedDelay):
				case <-r.Context().Done():
				}
			}
			writeErr(w, aerr.(*apiError))
			return
		}
		c.user = user
	}
	var data any
	err := checkParams(rt.spec, params)
	if err == nil {
		data, err = rt.h(c)
	}
	if s.dropAfter(w) {
		return
	}
	status := http.StatusOK
	if err != nil {
		ae, ok := err.(*apiError)
		if !ok {
			ae = &apiError{status: 500, msg: err.Error()}
		}
		status = ae.status
		writeErr(w, ae)
	} else {
		env := map[string]any{"data": data}
		if wt, ok := data.(withTotal); ok {
			env = map[string]any{"data": wt.data, "total": wt.total}
			data = wt.data
		}
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		_ = json.NewEncoder(w).Encode(env)
	}
	if s.opts.Record != nil {
		raw, _ := json.Marshal(data)
		s.opts.Record(Exchange{Method: r.Method, Route: rt.pattern, Params: params, Status: status, Response: raw})
	}
}

func writeErr(w http.ResponseWriter, e *apiError) {
	if e.status == 401 {
		// PVE answers 401 with an empty body; the reason is only in the status line.
		w.WriteHeader(401)
		return
	}
	msg := e.msg
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	body := map[string]any{"data": nil, "message": msg}
	if len(e.errs) > 0 {
		body["errors"] = e.errs
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(body)
}

// injectBefore applies latency and injected errors; false means the request was answered.
func (s *Server) injectBefore(w http.ResponseWriter) bool {
	s.faultMu.Lock()
	f := s.opts.Faults
	delay := f.Latency
	if f.Jitter > 0 {
		delay += time.Duration(s.rng.Int64N(int64(f.Jitter)))
	}
	fail := f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate
	s.faultMu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-s.done:
		}
	}
	if fail {
		writeErr(w, &apiError{status: 500, msg: "pvesim: injected fault"})
		return false
	}
	return true
}

// dropAfter closes the connection without answering, after the handler changed state.
func (s *Server) dropAfter(w http.ResponseWriter) bool {
	s.faultMu.Lock()
	drop := s.opts.Faults.DropRate > 0 && s.rng.Float64() < s.opts.Faults.DropRate
	s.faultMu.Unlock()
	if !drop {
		return false
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	}
	return true
}

// readParams merges query parameters with a JSON or form-encoded body, as PVE's extract_params does.
func readParams(r *http.Request) (map[string]any, *apiError) {
	out := map[string]any{}
	for k, v := range r.URL.Query() {
		out[k] = v[len(v)-1]
	}
	if r.Body == nil {
		return out, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 512*1024+1))
	if err != nil {
		return nil, &apiError{status: 400, msg: "unable to read request body"}
	}
	if len(body) > 512*1024 {
		return nil, &apiError{status: 501, msg: "for data too large"}
	}
	if len(body) == 0 {
		return out, nil
	}
	if r.Method == http.MethodGet || r.Method == http.MethodDelete {
		return nil, &apiError{status: 501, msg: "Unexpected content for method '" + r.Method + "'"}
	}
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, &apiError{status: 400, msg: "malformed JSON body: " + err.Error()}
		}
		for k, v := range m {
			out[k] = v
		}
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, &apiError{status: 400, msg: "malformed form body"}
		}
		for k, v := range vals {
			out[k] = v[len(v)-1]
		}
	default:
		return nil, &apiError{status: 506, msg: "unsupported content type '" + ct + "'"}
	}
	return out, nil
}

// call is one request being handled.
type call struct {
	srv    *Server
	r      *http.Request
	vars   map[string]string
	params map[string]any
	user   string // authenticated user, "USER@REALM!TOKEN" for tokens
	route  string
}

// Package profhook serves Go's pprof endpoints from a rangekeeper built for the bench-fleet
// harness, when RANGEKEEPER_PPROF names a loopback address (127.0.0.1:PORT, [::1]:PORT or
// localhost:PORT). The harness compiles it into the cli package with `go build -overlay`
// (wire.go.txt), so the product's sources are unchanged and a normal build has no such hook.
// Any other address is refused: the hook never listens beyond loopback.
package profhook

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/trace"
	"time"
)

// Env names the variable that switches the hook on.
const Env = "RANGEKEEPER_PPROF"

// TraceEnv names a file for an execution trace of the first TraceFor of the process (where a
// start spends its wall time: the CPU profile shows only what ran).
const TraceEnv = "RANGEKEEPER_TRACE"

// TraceFor is how long the start-up trace runs, unless TraceForEnv gives another duration
// (a 50,000-pod load outlasts 5 s).
const TraceFor = 5 * time.Second

// TraceForEnv names the variable that sets the trace's length (e.g. "20s").
const TraceForEnv = "RANGEKEEPER_TRACE_FOR"

func init() {
	if path := os.Getenv(TraceEnv); path != "" {
		if err := startTrace(path); err != nil {
			fmt.Fprintf(os.Stderr, "rangekeeper: %s: %v\n", TraceEnv, err)
		}
	}
	addr := os.Getenv(Env)
	if addr == "" {
		return
	}
	if err := serve(addr); err != nil {
		fmt.Fprintf(os.Stderr, "rangekeeper: %s: %v\n", Env, err)
	}
}

func startTrace(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return err
	}
	length := TraceFor
	if d, err := time.ParseDuration(os.Getenv(TraceForEnv)); err == nil && d > 0 {
		length = d
	}
	time.AfterFunc(length, func() { trace.Stop(); f.Close() })
	return nil
}

// serve starts the pprof server on addr, which must be a loopback address.
func serve(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not a loopback address; refusing to serve pprof there", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() { _ = http.Serve(l, mux) }()
	return nil
}

package canary

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

type listValue []string

func (l *listValue) String() string     { return strings.Join(*l, ",") }
func (l *listValue) Set(v string) error { *l = append(*l, v); return nil }

// Main is the canary program: `serve` until ctx ends, or `check` once. It returns the exit
// status (0 ok, 1 a listener could not start, 2 usage).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, ErrUsage)
		return 2
	}
	fs := flag.NewFlagSet("rangekeeper-canary "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var tcp, dial listValue
	fs.Var(&tcp, "tcp", "serve: TCP address to accept on, as ADDR=TAG (repeatable)")
	fs.Var(&dial, "dial", "check: TCP address to dial (repeatable)")
	dns := fs.String("dns", "", "serve: DNS address (UDP and TCP); check: DNS server to query")
	zone := fs.String("zone", "", "serve: the canary zone")
	name := fs.String("name", "", "check: the name to look up")
	timeout := fs.Duration("timeout", 2*time.Second, "check: per-contact timeout")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	switch args[0] {
	case "serve":
		cfg := ServeConfig{DNS: *dns, Zone: *zone}
		for _, t := range tcp {
			addr, tag, _ := strings.Cut(t, "=")
			cfg.TCP = append(cfg.TCP, Listener{Addr: addr, Tag: tag})
		}
		if cfg.DNS != "" && cfg.Zone == "" {
			fmt.Fprintln(stderr, "--dns needs --zone")
			return 2
		}
		if err := Serve(ctx, cfg, stdout); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	case "check":
		Check(ctx, CheckConfig{Dial: dial, DNS: *dns, Name: *name, Timeout: *timeout}, stdout)
		return 0
	}
	fmt.Fprintln(stderr, ErrUsage)
	return 2
}

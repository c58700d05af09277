// Command rangekeeper-canary is the static listener `rangekeeper verify` runs in its canary
// containers: it logs every contact a sandbox makes with it as a JSON line and contacts nothing
// itself, except the addresses verify's controls give it in check mode.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rangekeeper/rangekeeper/verify/canary"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := canary.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

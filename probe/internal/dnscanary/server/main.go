// Command server runs the test DNS canary on UDP :53 for the zone given as its argument.
package main

import (
	"fmt"
	"net"
	"os"

	"github.com/rangekeeper/rangekeeper/probe/internal/dnscanary"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: server ZONE")
		os.Exit(2)
	}
	pc, err := net.ListenPacket("udp", ":53")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dnscanary.Serve(pc, os.Args[1])
}

// Command rangekeeper-demo-agent is the tiny static program the demo range's containers run: it
// idles like an agent sandbox, or serves a fake scorer on a port inside the demo's own networks.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "serve" {
		serve(os.Args[2])
		return
	}
	idle()
}

// idle waits for a stop signal, like `sleep infinity` without needing a shell in the image.
func idle() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}

func serve(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo-agent:", err)
		os.Exit(1)
	}
	go func() { idle(); ln.Close() }()
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "demo scorer: ok")
	}))
}

// Package procs sizes Go's scheduler for an interactive program. With GOMAXPROCS equal to a
// small machine's cores (2), a workbench loading 50,000 pods has every P busy decoding, and a key
// press waits behind that work: in execution traces the goroutine that parses the key sat
// runnable for 150-250 ms at a time, once behind a P whose thread had gone into the blocking
// read of the terminal (the reader readies the parser, then blocks in epoll_wait; only sysmon
// takes that P back). A few more Ps than cores hand that wait to the kernel, which switches
// threads in milliseconds (issue 18: key-to-frame p99 while loading).
package procs

import (
	"os"
	"runtime"
)

// Interactive is the fewest Ps an interactive rangekeeper runs with.
const Interactive = 4

// ForInteractive raises GOMAXPROCS to Interactive unless the operator set GOMAXPROCS, and
// returns the value in force. It never lowers it.
func ForInteractive() int {
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	if n := runtime.GOMAXPROCS(0); n >= Interactive {
		return n
	}
	runtime.GOMAXPROCS(Interactive)
	return Interactive
}

// Package procs sizes Go's scheduler for an interactive program. With GOMAXPROCS equal to a
// small machine's cores (2), a workbench loading 50,000 pods has every P busy decoding, and a key
// press waits behind that work: in execution traces the goroutine that parses the key sat
// runnable for 150-820 ms at a time, behind a P whose thread had gone into the blocking read of
// the terminal (the reader readies the parser, then blocks in epoll_wait; only sysmon takes that
// P back). With a spare P, an idle one picks the parser up at once (key-to-frame while
// loading).
package procs

import (
	"os"
	"runtime"
)

// Interactive is the fewest Ps an interactive rangekeeper runs with.
const Interactive = 4

// ForInteractive raises GOMAXPROCS to Interactive and returns the value in force. It never
// lowers it, and leaves it alone when the operator set GOMAXPROCS or a CPU limit set it below
// the cores (in a container with a CPU quota, more running threads than the quota means
// throttled periods: longer stalls, not shorter).
func ForInteractive() int {
	_, set := os.LookupEnv("GOMAXPROCS")
	n := choose(runtime.GOMAXPROCS(0), runtime.NumCPU(), set)
	if n != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
	}
	return n
}

// choose is ForInteractive's decision: current Ps, usable CPUs, whether the operator set them.
func choose(current, cpus int, operatorSet bool) int {
	if operatorSet || current >= Interactive || current < cpus {
		return current
	}
	return Interactive
}

package fleet

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds the process's CPU time per op (user+system) to a benchmark: on a loaded shared
// machine wall-clock ns/op inflates with the load, CPU time much less. Call it after setup; run
// the returned function when the loop ends.
func reportCPU(b *testing.B) func() {
	u0 := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-u0).Microseconds())/1000/float64(b.N), "cpu-ms/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

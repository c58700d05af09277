package tui

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// BenchmarkIdleCPU runs the real program (teatest, real supervisor, 1k sandboxes, the default
// 1 s tick, the FPS the workbench uses) for a few idle seconds and reports the process's CPU use as a percentage of one core
// (goal < 0.5 %). Run it with -benchtime=1x.
func BenchmarkIdleCPU(b *testing.B) {
	const idle = 3 * time.Second
	h := newHarness(b, harnessOpts{w: 120, h: 40, tick: time.Second, fps: FPS, setup: func(d *fakeBackend) {
		for i := range 1000 {
			d.fleet = append(d.fleet, sandbox("docker:test", backends.KindDocker, fmt.Sprintf("inspect-idle-i%06d", i), "idle", 2, time.Hour))
		}
	}})
	h.waitText("1004 sandboxes")
	time.Sleep(500 * time.Millisecond) // let the first frames and the background query settle
	b.ResetTimer()
	var cpu, wall time.Duration
	for range b.N {
		u0 := rusage()
		t0 := time.Now()
		time.Sleep(idle)
		wall += time.Since(t0)
		cpu += rusage() - u0
	}
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
}

func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on Linux).
const clockTicks = 100

// rss is the resident set size of pid in bytes.
func rss(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// cpuTime is the CPU time pid has used so far (user + system, every thread, live or exited).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// "pid (comm) state ppid ..." — comm may contain spaces, so fields count from after ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// stopPID makes sure pid is gone: SIGTERM, then SIGKILL after a grace period. It only signals
// a process still running exe (guards against PID reuse).
func stopPID(pid int, exe string, grace time.Duration) {
	alive := func() bool {
		got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		return err == nil && got == exe
	}
	if !alive() {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive() {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// loadavg is the 1, 5 and 15 minute load average.
func loadavg() (string, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?", err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?", nil
	}
	return strings.Join(f[:3], " "), nil
}

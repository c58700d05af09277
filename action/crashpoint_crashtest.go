//go:build crashtest

package action

import (
	"os"
	"strings"
	"syscall"
)

func init() {
	at := os.Getenv("RANGEKEEPER_CRASH_AT")
	want, prefix, ok := strings.Cut(at, ":")
	if !ok {
		return
	}
	crashPoint = func(action, step string) {
		if action == want && strings.HasPrefix(step, prefix) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}

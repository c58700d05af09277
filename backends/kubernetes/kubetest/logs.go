package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PodLogFiles are the files kwok serves as every container's log through pods/log (kwok's
// ClusterLogs): Current for a plain request, Previous for ?previous=true. kwok reads them with
// the kubelet's own CRI log reader, so each line must be in CRI format (see CRILine); follow,
// tailLines, sinceTime/sinceSeconds, limitBytes and timestamps behave as on a real kubelet.
type PodLogFiles struct{ Current, Previous string }

// writeLogsConfig writes kwok's ClusterLogs config: every container of every pod, whatever its
// name, is served from the two fixed files under c.dir/logs.
func (c *Cluster) writeLogsConfig() (string, error) {
	d := filepath.Join(c.dir, "logs")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{"current.log", "previous.log"} {
		if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
			return "", err
		}
	}
	cfg := filepath.Join(c.dir, "kwok-logs.yaml")
	return cfg, os.WriteFile(cfg, []byte(fmt.Sprintf(`kind: ClusterLogs
apiVersion: kwok.x-k8s.io/v1alpha1
metadata:
  name: files
spec:
  logs:
  - logsFile: %s
    previousLogsFile: %s
    follow: true
`, filepath.Join(d, "current.log"), filepath.Join(d, "previous.log"))), 0o644)
}

// PodLogs gives the test the pod log files, emptied, for its whole duration. kwok's config
// is read once at start and ClusterLogs cannot name a file per pod, so the files are shared
// by every pod of the cluster: a second test calling PodLogs waits for the first to end.
func (c *Cluster) PodLogs(t testing.TB) PodLogFiles {
	t.Helper()
	c.logsMu.Lock()
	t.Cleanup(c.logsMu.Unlock)
	d := filepath.Join(c.dir, "logs")
	f := PodLogFiles{Current: filepath.Join(d, "current.log"), Previous: filepath.Join(d, "previous.log")}
	for _, p := range []string{f.Current, f.Previous} {
		if err := os.Truncate(p, 0); err != nil {
			t.Fatalf("kubetest: %v", err)
		}
	}
	return f
}

// CRILine formats one log line the way a container runtime writes it (and kwok reads it):
// RFC 3339 nanosecond time, stream, "F" for a full line, the text.
func CRILine(at time.Time, stream, text string) string {
	return at.UTC().Format(time.RFC3339Nano) + " " + stream + " F " + strings.TrimSuffix(text, "\n") + "\n"
}

// AppendLog appends lines (already in CRI format) to a log file, as a runtime would.
func AppendLog(t testing.TB, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
}

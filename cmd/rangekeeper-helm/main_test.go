package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The helper's exit status is its contract with the backend: 2 for a command line it cannot run,
// 1 with the reason for a failure. (0 and 3 need a cluster: backends/kubernetes'
// TestClusterTeardownThroughTheHelmHelper runs the built binary against one.)
func TestRunExitStatus(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\ncontexts: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no verb", nil, 2, "usage"},
		{"unknown verb", []string{"install", "r"}, 2, "usage"},
		{"no release", []string{"uninstall", "--namespace", "ns", "--context", "c"}, 2, "usage"},
		{"no namespace", []string{"uninstall", "--context", "c", "--", "r"}, 2, "usage"},
		{"both context and in-cluster", []string{"uninstall", "--namespace", "ns", "--context", "c", "--in-cluster", "--", "r"}, 2, "usage"},
		{"unknown flag", []string{"uninstall", "--token", "x", "--", "r"}, 2, "usage"},
		{"context not in the kubeconfig", []string{"uninstall", "--namespace", "ns", "--kubeconfig", kubeconfig, "--context", "gone", "--", "r"}, 1, `no context "gone"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.says) {
				t.Errorf("run(%q) = %d, stderr %q; want %d saying %q", tc.args, code, stderr.String(), tc.code, tc.says)
			}
		})
	}
}

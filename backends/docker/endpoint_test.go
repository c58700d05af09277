package docker

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeContext lays out a docker CLI context store the way `docker context create` does.
func writeContext(t *testing.T, dir, name, host string) {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	meta := filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]))
	if err := os.MkdirAll(meta, 0o700); err != nil {
		t.Fatal(err)
	}
	body := `{"Name":"` + name + `","Metadata":{},"Endpoints":{"docker":{"Host":"` + host + `","SkipTLSVerify":false}}}`
	if err := os.WriteFile(filepath.Join(meta, "meta.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEndpointResolution(t *testing.T) {
	dir := t.TempDir()
	writeContext(t, dir, "lab", "tcp://127.0.0.1:2376")
	writeContext(t, dir, "current", "unix:///run/current.sock")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"currentContext":"current"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)

	tests := []struct {
		name     string
		env      map[string]string
		ep       Endpoint
		wantHost string
		wantName string
		wantErr  string
	}{
		{name: "explicit host wins", env: map[string]string{"DOCKER_HOST": "unix:///env.sock"}, ep: Endpoint{Host: "unix:///x.sock"}, wantHost: "unix:///x.sock", wantName: "unix:///x.sock"},
		{name: "DOCKER_HOST beats contexts", env: map[string]string{"DOCKER_HOST": "unix:///env.sock", "DOCKER_CONTEXT": "lab"}, wantHost: "unix:///env.sock", wantName: "default"},
		{name: "DOCKER_CONTEXT", env: map[string]string{"DOCKER_CONTEXT": "lab"}, wantHost: "tcp://127.0.0.1:2376", wantName: "lab"},
		{name: "current context from config.json", wantHost: "unix:///run/current.sock", wantName: "current"},
		{name: "named context in config", ep: Endpoint{Name: "range", Context: "lab"}, wantHost: "tcp://127.0.0.1:2376", wantName: "range"},
		{name: "missing context is a clear error", ep: Endpoint{Context: "nope"}, wantErr: `docker context "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DOCKER_HOST", "")
			t.Setenv("DOCKER_CONTEXT", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := tt.ep.Resolve()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Host != tt.wantHost || got.Name != tt.wantName {
				t.Errorf("Resolve = %s (%s), want %s (%s)", got.Host, got.Name, tt.wantHost, tt.wantName)
			}
		})
	}
}

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPVESimServesAndKeepsTheSecretOutOfOutput(t *testing.T) {
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	secret := filepath.Join(t.TempDir(), "pve-secret")
	cmd := newPVECmd(f, nil)
	cmd.SetArgs([]string{"sim", "--secret-file", secret, "--duration", "50ms"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("pve sim: %v (%s)", err, errOut.String())
	}
	st, err := os.Stat(secret)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", st, err)
	}
	raw, _ := os.ReadFile(secret)
	value := strings.TrimSpace(string(raw))
	if len(value) < 32 || strings.Contains(out.String(), value) {
		t.Fatalf("secret %q missing or printed:\n%s", value, out.String())
	}
	for _, want := range []string{"SIMULATED", "http://127.0.0.1:", "/api2/json", "token_secret_file: " + secret} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	cmd = newPVECmd(f, nil)
	cmd.SetArgs([]string{"sim", "--secret-file", secret, "--error-rate", "2"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err == nil {
		t.Error("error rate 2 accepted")
	}
}

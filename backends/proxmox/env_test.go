package proxmox

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
	"github.com/rangekeeper/rangekeeper/config"
)

func TestFromEnvSingleInstance(t *testing.T) {
	t.Setenv("PROXMOX_CONFIG_FILE", "")
	t.Setenv("PROXMOX_HOST", "10.0.0.5")
	t.Setenv("PROXMOX_PORT", "8443")
	t.Setenv("PROXMOX_USER", "evals")
	t.Setenv("PROXMOX_REALM", "pve")
	t.Setenv("PROXMOX_VERIFY_TLS", "0")
	t.Setenv("PROXMOX_PASSWORD", "hunter2")
	eps, err := FromEnv()
	if err != nil || len(eps) != 1 {
		t.Fatalf("FromEnv = %+v, %v", eps, err)
	}
	ep := eps[0].Endpoint
	if ep.URL != "https://10.0.0.5:8443" || ep.User != "evals" || ep.Realm != "pve" || ep.PasswordEnv != "PROXMOX_PASSWORD" || !ep.Insecure {
		t.Errorf("endpoint %+v", ep)
	}
	t.Setenv("PROXMOX_PORT", "eighty")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "PROXMOX_PORT") {
		t.Errorf("bad port: %v", err)
	}
	t.Setenv("PROXMOX_HOST", "")
	if eps, err := FromEnv(); err != nil || eps != nil {
		t.Errorf("unset: %v %v", eps, err)
	}
}

func TestFromEnvConfigFileSeveralInstances(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "instances.json")
	doc := `{"instances": [
  {"instance_id": "a", "host": "pve-a", "node": "n1", "password": "pa", "verify_tls": false},
  {"instance_id": "b", "host": "pve-b", "port": 9006, "user": "ops", "user_realm": "pve", "password": "pb"}
]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PROXMOX_CONFIG_FILE", path)
	eps, err := FromEnv()
	if err != nil || len(eps) != 2 {
		t.Fatalf("FromEnv = %+v, %v", eps, err)
	}
	if eps[0].Endpoint.URL != "https://pve-a:8006" || !eps[0].Endpoint.Insecure || eps[0].Node != "n1" {
		t.Errorf("instance a %+v", eps[0])
	}
	if eps[1].Endpoint.URL != "https://pve-b:9006" || eps[1].Endpoint.User != "ops" || eps[1].Endpoint.Insecure {
		t.Errorf("instance b %+v", eps[1])
	}
	for _, ep := range eps {
		if strings.Contains(ep.Endpoint.PasswordFile+ep.Endpoint.PasswordEnv, "pa") && !strings.Contains(ep.Endpoint.PasswordFile, dir) {
			t.Errorf("password value copied into the endpoint: %+v", ep.Endpoint)
		}
	}
	if pw, err := readSecret("", eps[1].Endpoint.PasswordFile); err != nil || pw != "pb" {
		t.Errorf("password of b = %q %v", pw, err)
	}
	if err := os.WriteFile(path, []byte("{\"instances\": [\n  {\"host\": 5}\n]}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: %v", err)
	}
}

func TestNewErrorsNameSecretSourcesNotValues(t *testing.T) {
	t.Setenv("RK_TEST_EMPTY", "")
	for _, tc := range []struct {
		cfg  config.ProxmoxEndpoint
		want string
	}{
		{config.ProxmoxEndpoint{URL: "https://x:8006"}, "name is required"},
		{config.ProxmoxEndpoint{Name: "a", URL: "ftp://x"}, "want https://host:8006"},
		{config.ProxmoxEndpoint{Name: "a", URL: "https://x:8006"}, "set token_id"},
		{config.ProxmoxEndpoint{Name: "a", URL: "https://x:8006", TokenID: "u@pve!t", TokenSecretEnv: "RK_TEST_EMPTY"}, "RK_TEST_EMPTY is empty"},
		{config.ProxmoxEndpoint{Name: "a", URL: "https://x:8006", User: "root", PasswordFile: "/nonexistent/pw"}, "/nonexistent/pw"},
		{config.ProxmoxEndpoint{Name: "a", URL: "https://x:8006", User: "root", PasswordEnv: "RK_TEST_EMPTY", CAFile: "/nonexistent/ca.pem"}, "ca_file"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// Ticket auth (username/password, then cookie + CSRF) over TLS verified with a CA file.
func TestNewTicketAuthOverVerifiedTLS(t *testing.T) {
	sim := pvesim.Start(pvesim.Options{TLS: true, Password: "s3cret-pw", TaskDelay: 2 * time.Millisecond})
	defer sim.Close()
	if err := pvesim.SeedDemo(sim); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sim.Certificate()}), 0o600); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(sim.URL(), "/api2/json")
	b, err := New(config.ProxmoxEndpoint{Name: "tls", URL: base, User: "root", Realm: "pam", PasswordFile: pwFile, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	b.SetTaskTimeout(5 * time.Second)
	ctx := ctxT(t)
	sbs, err := b.List(ctx)
	if err != nil || len(sbs) != 4 || !sbs[0].Simulated {
		t.Fatalf("list over ticket auth: %d sandboxes, %v", len(sbs), err)
	}
	// A POST needs the CSRF token the client got with the ticket.
	res, err := b.Exec(ctx, "pve:tls/cyb002z", backendsExec("echo", "ok"))
	if err != nil || string(res.Stdout) != "ok\n" {
		t.Fatalf("exec over ticket auth: %+v %v", res, err)
	}

	// Without the CA, verification fails (TLS verification is on by default).
	nb, err := New(config.ProxmoxEndpoint{Name: "tls", URL: base, User: "root", PasswordFile: pwFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nb.List(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unverified TLS: %v", err)
	}
	// A wrong password is an authentication error that does not echo the password.
	if err := os.WriteFile(pwFile, []byte("wrong-pw"), 0o600); err != nil {
		t.Fatal(err)
	}
	wb, _ := New(config.ProxmoxEndpoint{Name: "tls", URL: base, User: "root", PasswordFile: pwFile, CAFile: ca})
	if _, err := wb.List(ctx); err == nil || strings.Contains(err.Error(), "wrong-pw") || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong password: %v", err)
	}
}

// Inspect's default harness setup (root@pam password, TLS verification off) is itself flagged.
func TestRootPasswordWithoutTLSVerificationIsFlagged(t *testing.T) {
	sim := pvesim.Start(pvesim.Options{Password: "pw"})
	defer sim.Close()
	if err := pvesim.SeedDemo(sim); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RK_TEST_PVE_PW", "pw")
	b, err := New(config.ProxmoxEndpoint{Name: "insp", URL: sim.URL(), User: "root", PasswordEnv: "RK_TEST_PVE_PW", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	sbs, err := b.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, sb := range sbs {
		if !strings.Contains(strings.Join(ruleIDs(sb.Findings, ""), " "), "PVE-T02") {
			t.Errorf("%s lacks PVE-T02", sb.ID)
		}
	}
}

package facts

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCapSetDecodesNames(t *testing.T) {
	tests := []struct {
		hex  string
		want []string
	}{
		{"00000000a80425fb", []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
			"NET_BIND_SERVICE", "NET_RAW", "SYS_CHROOT", "MKNOD", "AUDIT_WRITE", "SETFCAP"}},
		{"0000000000200000", []string{"SYS_ADMIN"}},
		{"0000000000000000", []string{}},
		{"0000040000000000", []string{"CAP_42"}},
	}
	for _, tt := range tests {
		got, err := ParseCapSet(tt.hex)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Names, tt.want) {
			t.Errorf("%s: %v, want %v", tt.hex, got.Names, tt.want)
		}
	}
	if _, err := ParseCapSet("zz"); err == nil {
		t.Error("bad hex accepted")
	}
}

func TestCapSetSurvivesJSON(t *testing.T) {
	in := NewCapSet(1<<CapSysAdmin | 1<<CapNetRaw)
	raw, _ := json.Marshal(in)
	var out CapSet
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Has(CapSysAdmin) || !out.Has(CapNetRaw) || out.Has(CapSysModule) {
		t.Errorf("decoded %+v lost its mask", out)
	}
}

func TestParseMountInfo(t *testing.T) {
	const mi = `1 0 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/x
2 1 254:0 /var/lib/docker/containers/abc/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/vda rw
3 1 0:22 /docker.sock /var/run/docker.sock ro,relatime - tmpfs tmpfs rw
4 1 254:0 /tmp/host\040dir /data rw,relatime shared:5 - ext4 /dev/vda rw
5 1 254:0 /var/lib/docker/volumes/v/_data /vol rw - ext4 /dev/vda rw
6 1 254:0 /etc /hostetc ro - ext4 /dev/vda rw
garbage line
`
	list, errs := ParseMountInfo(mi)
	if len(list) != 6 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 7") {
		t.Fatalf("parsed %d entries, errors %v", len(list), errs)
	}
	if list[3].Root != "/tmp/host dir" || !list[3].RW() || list[3].Optional[0] != "shared:5" {
		t.Errorf("entry 4: %+v", list[3])
	}
	root := fixture(t, map[string]string{"/proc/self/mountinfo": mi})
	rep := Collect(context.Background(), Options{Root: root, Env: []string{}, Homes: []string{}})
	m := rep.Mounts
	if !m.RootRW || len(m.Sockets) != 1 || m.Sockets[0].Mountpoint != "/var/run/docker.sock" {
		t.Errorf("root rw %v sockets %+v", m.RootRW, m.Sockets)
	}
	want := map[string]string{"/data": "host directory", "/vol": "named volume", "/hostetc": "host /etc"}
	if len(m.HostBinds) != len(want) {
		t.Fatalf("host binds %+v", m.HostBinds)
	}
	for _, b := range m.HostBinds {
		if want[b.Mountpoint] != b.Why {
			t.Errorf("%s: why %q, want %q", b.Mountpoint, b.Why, want[b.Mountpoint])
		}
		if b.Mountpoint == "/data" && (!b.RW || !b.Shared) {
			t.Errorf("/data: %+v, want rw shared", b)
		}
	}
}

func TestCollectDecodesProcFixture(t *testing.T) {
	root := fixture(t, map[string]string{
		"/proc/self/status": "Name:\tprobe\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nGroups:\t999\n" +
			"NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n" +
			"CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n",
		"/proc/sys/kernel/cap_last_cap":                       "40\n",
		"/proc/self/uid_map":                                  "         0     100000      65536\n",
		"/proc/self/attr/current":                             "docker-default (enforce)\n",
		"/etc/group":                                          "root:x:0:\ndocker:x:999:agent\n",
		"/proc/self/cgroup":                                   "0::/\n",
		"/sys/fs/cgroup/cgroup.controllers":                   "memory pids\n",
		"/sys/fs/cgroup/memory.max":                           "67108864\n",
		"/sys/fs/cgroup/pids.max":                             "max\n",
		"/proc/sys/net/ipv4/conf/all/route_localnet":          "1\n",
		"/proc/sys/kernel/osrelease":                          "5.10.0-test\n",
		"/var/run/secrets/kubernetes.io/serviceaccount/token": testJWT,
		"/root/.aws/credentials":                              "[default]\naws_secret_access_key = DO-NOT-LEAK\n",
	})
	if err := os.Symlink("pid:[4026531836]", filepath.Join(root, "proc/self/ns/pid")); err != nil {
		t.Fatal(err)
	}
	env := []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "OPENAI_API_KEY=sk-test-DUMMY-xyz", "PWD=/", "SCORER_SERVICE_HOST=10.0.0.9", "OPENAI_BASE_URL=http://x"}
	rep := Collect(context.Background(), Options{Root: root, Env: env, Homes: []string{"/root"}})
	if !rep.Caps.FullBound || len(rep.Caps.Effective.Names) != 0 {
		t.Errorf("caps: full %v eff %v", rep.Caps.FullBound, rep.Caps.Effective.Names)
	}
	if rep.NoNewPrivs == nil || !*rep.NoNewPrivs || rep.Seccomp.Mode != 2 || rep.Seccomp.Filters != 1 {
		t.Errorf("nnp %v seccomp %+v", rep.NoNewPrivs, rep.Seccomp)
	}
	if rep.Identity.EUID != 1000 || !rep.Identity.UserNS || !reflect.DeepEqual(rep.Identity.DangerousGroups, []string{"docker"}) {
		t.Errorf("identity %+v", rep.Identity)
	}
	if rep.LSM.AppArmor != "docker-default (enforce)" || !rep.LSM.Confined {
		t.Errorf("lsm %+v", rep.LSM)
	}
	if !rep.Namespaces.HostPID {
		t.Errorf("pid inode 4026531836 not read as the host pid namespace: %+v", rep.Namespaces)
	}
	c := rep.Cgroup
	if c.Version != 2 || !c.Private || !c.MemoryCap || c.PidsCap {
		t.Errorf("cgroup %+v", c)
	}
	if !rep.Kernel.RouteLocalnet || rep.Kernel.Release != "5.10.0-test" {
		t.Errorf("kernel %+v", rep.Kernel)
	}
	if !rep.Runtime.Kubernetes || rep.Kubernetes.Claims["sub"] != "system:serviceaccount:eval:agent" || rep.Kubernetes.Claims["namespace"] != "eval" {
		t.Errorf("kubernetes %+v %+v", rep.Runtime, rep.Kubernetes)
	}
	if !reflect.DeepEqual(rep.Secrets.EnvNames, []string{"OPENAI_API_KEY"}) || !reflect.DeepEqual(rep.Secrets.Files, []string{"/root/.aws/credentials"}) {
		t.Errorf("secrets %+v", rep.Secrets)
	}
	if !reflect.DeepEqual(rep.Secrets.ModelEndpoint, []string{"OPENAI_BASE_URL"}) || !reflect.DeepEqual(rep.Kubernetes.ServiceLinks, []string{"SCORER_SERVICE_HOST"}) {
		t.Errorf("model endpoints %v service links %v", rep.Secrets.ModelEndpoint, rep.Kubernetes.ServiceLinks)
	}
	raw, _ := json.Marshal(rep)
	for _, secret := range []string{"sk-test-DUMMY-xyz", "DO-NOT-LEAK", "c2lnbmF0dXJl", strings.Split(testJWT, ".")[1]} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("report contains secret material %q", secret)
		}
	}
}

// testJWT has a payload of a Kubernetes projected token and a fake signature.
var testJWT = "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(
	`{"iss":"https://kubernetes.default.svc","sub":"system:serviceaccount:eval:agent","aud":["api"],"exp":1900000000,`+
		`"kubernetes.io":{"namespace":"eval","serviceaccount":{"name":"agent"},"pod":{"name":"agent-0"}}}`)) + ".c2lnbmF0dXJl"

func TestJWTClaimsRejectsNonJWT(t *testing.T) {
	for _, tok := range []string{"", "a.b", "a.!!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte("nope")) + ".c"} {
		if c := JWTClaims(tok); c["error"] == "" {
			t.Errorf("%q: %v, want an error claim", tok, c)
		}
	}
}

// fixture writes files under a temporary root.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"proc/self/ns", "dev", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

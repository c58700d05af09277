package facts

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// socketPaths are the engine and runtime sockets of the shared vocabulary (spec/catalog).
var socketPaths = catalog.EngineSocketPaths

// sockets is P-SOCK-01: stat only, and access(W_OK) — connecting would talk to the engine.
func (c *collector) sockets() {
	c.report.Sockets = []Socket{}
	seen := map[string]bool{}
	add := func(p string) {
		if seen[p] {
			return
		}
		fi, err := os.Stat(c.path(p))
		if err != nil || fi.Mode()&os.ModeSocket == 0 {
			return
		}
		seen[p] = true
		s := Socket{Path: p, Kind: SocketKind(p), Writable: c.access(p).Writable, GID: -1}
		if st, ok := statGID(fi); ok {
			s.GID = st
		}
		if s.Kind == "" {
			s.Kind = "unix"
		}
		c.report.Sockets = append(c.report.Sockets, s)
	}
	for _, p := range socketPaths {
		add(p)
	}
	for _, m := range c.report.Mounts.Sockets {
		add(m.Mountpoint)
	}
	// Bounded walk: two levels of /run, /var/run and /tmp, at most 2000 entries.
	budget := 2000
	for _, dir := range []string{"/run", "/var/run", "/tmp"} {
		base := c.path(dir)
		_ = filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
			if budget--; budget < 0 || err != nil {
				return filepath.SkipDir
			}
			rel := dir + strings.TrimPrefix(p, base)
			if e.IsDir() && strings.Count(strings.TrimPrefix(rel, dir), "/") >= 2 {
				return filepath.SkipDir
			}
			if e.Type()&os.ModeSocket != 0 && SocketKind(rel) != "" {
				add(rel)
			}
			return nil
		})
	}
}

var tokenDirs = []string{"/var/run/secrets/kubernetes.io/serviceaccount", "/run/secrets/kubernetes.io/serviceaccount", "/secrets/kubernetes.io/serviceaccount"}

// kubernetes is P-K8S-01 and P-K8S-04: token presence with payload claims; the token itself
// and its signature are never copied into the report.
func (c *collector) kubernetes() {
	k := &c.report.Kubernetes
	for _, kv := range c.opt.Env {
		name, val, _ := strings.Cut(kv, "=")
		if name == "KUBERNETES_SERVICE_HOST" {
			k.ServiceHost = val
		}
		if strings.HasSuffix(name, "_SERVICE_HOST") && name != "KUBERNETES_SERVICE_HOST" {
			k.ServiceLinks = append(k.ServiceLinks, name)
		}
	}
	sort.Strings(k.ServiceLinks)
	paths := []string{}
	for _, d := range tokenDirs {
		paths = append(paths, d+"/token")
	}
	for _, kv := range c.opt.Env {
		name, val, _ := strings.Cut(kv, "=")
		if name == "AWS_WEB_IDENTITY_TOKEN_FILE" || name == "AZURE_FEDERATED_TOKEN_FILE" {
			paths = append(paths, val)
		}
	}
	for _, p := range paths {
		tok, err := c.readSmall(p, 16384)
		if err != nil {
			continue
		}
		k.TokenPaths = append(k.TokenPaths, p)
		if k.Claims == nil {
			k.Claims = JWTClaims(strings.TrimSpace(tok))
		}
	}
}

// JWTClaims decodes a JWT's payload (no verification) into the few non-secret claims worth
// showing. The header and signature are ignored and nothing of the token itself is returned.
func JWTClaims(tok string) map[string]string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return map[string]string{"error": "not a JWT"}
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return map[string]string{"error": "payload not base64url"}
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		return map[string]string{"error": "payload not JSON"}
	}
	out := map[string]string{}
	for _, k := range []string{"iss", "sub", "aud"} {
		if v, ok := p[k]; ok {
			out[k] = fmt.Sprint(v)
		}
	}
	if exp, ok := p["exp"].(float64); ok {
		out["exp"] = time.Unix(int64(exp), 0).UTC().Format(time.RFC3339)
	}
	if k8s, ok := p["kubernetes.io"].(map[string]any); ok {
		if ns, ok := k8s["namespace"].(string); ok {
			out["namespace"] = ns
		}
		for _, k := range []string{"serviceaccount", "pod"} {
			if m, ok := k8s[k].(map[string]any); ok {
				out[k] = fmt.Sprint(m["name"])
			}
		}
	}
	return out
}

// isCredential classifies a variable with the shared vocabulary (names, name patterns, value
// shapes); the value is inspected, never reported.
func isCredential(name, val string) bool {
	is, _ := catalog.Credential(name, val)
	return is
}

// secrets is P-SEC-01..03: names and paths only.
func (c *collector) secrets() {
	s := &c.report.Secrets
	s.EnvNames, s.Files = []string{}, []string{}
	for _, kv := range c.opt.Env {
		name, val, _ := strings.Cut(kv, "=")
		switch {
		case name == "DOCKER_HOST" || name == "CONTAINER_HOST":
			s.EngineEnv = append(s.EngineEnv, name)
		case strings.EqualFold(name, "HTTP_PROXY") || strings.EqualFold(name, "HTTPS_PROXY") || strings.EqualFold(name, "ALL_PROXY") || strings.EqualFold(name, "NO_PROXY"):
			s.ProxyEnv = append(s.ProxyEnv, name)
		case catalog.ModelEndpointRE.MatchString(name):
			s.ModelEndpoint = append(s.ModelEndpoint, name)
		case name == "PWD" || name == "OLDPWD": // working directories, not passwords
		case val != "" && isCredential(name, val):
			s.EnvNames = append(s.EnvNames, name)
		}
	}
	sort.Strings(s.EnvNames)
	homes := c.opt.Homes
	if homes == nil {
		homes = c.homes()
	}
	for _, h := range homes {
		for _, rel := range []string{".aws/credentials", ".aws/config", ".config/gcloud/credentials.db",
			".config/gcloud/application_default_credentials.json", ".kube/config", ".docker/config.json",
			".netrc", ".git-credentials", ".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa", ".config/gh/hosts.yml",
			".huggingface/token", ".cache/huggingface/token", ".config/openai/auth.json", ".pypirc", ".npmrc"} {
			p := filepath.Join(h, rel)
			if c.exists(p) {
				s.Files = append(s.Files, p)
			}
		}
	}
	for _, p := range []string{"/etc/kubernetes/admin.conf", "/etc/kubernetes/kubelet.conf", "/var/lib/kubelet/kubeconfig"} {
		if c.exists(p) {
			s.Files = append(s.Files, p)
		}
	}
	if entries, err := os.ReadDir(c.path("/run/secrets")); err == nil {
		for _, e := range entries {
			if e.Name() != "kubernetes.io" {
				s.Files = append(s.Files, "/run/secrets/"+e.Name())
			}
		}
	}
	s.Files = sortedUnique(s.Files)
	// Other processes' environments readable? Count only; never read their contents.
	self := os.Getpid()
	entries, _ := os.ReadDir(c.path("/proc"))
	for _, e := range entries {
		if e.Name() == fmt.Sprint(self) || e.Name() == "self" {
			continue
		}
		if _, err := fmt.Sscanf(e.Name(), "%d", new(int)); err != nil {
			continue
		}
		if c.root == "/" && faccess("/proc/"+e.Name()+"/environ", 4) == nil {
			s.OtherEnviron++
		}
	}
}

// homes lists $HOME, /root and every home directory in /etc/passwd.
func (c *collector) homes() []string {
	out := []string{"/root"}
	for _, kv := range c.opt.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok && v != "" {
			out = append(out, v)
		}
	}
	passwd, _ := c.read("/etc/passwd")
	for _, line := range strings.Split(passwd, "\n") {
		if f := strings.Split(line, ":"); len(f) >= 6 && strings.HasPrefix(f[5], "/") && f[5] != "/" && f[5] != "/nonexistent" {
			out = append(out, f[5])
		}
	}
	return sortedUnique(out)
}

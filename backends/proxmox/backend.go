// Package proxmox is the Proxmox VE backend: it discovers Inspect's VM sandboxes (grouped by
// their per-sample SDN zone) with the go-proxmox client, computes PVE-* posture, and snapshots,
// reverts, tears down, execs and copies files through the PVE API and the QEMU guest agent.
package proxmox

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
	"github.com/rangekeeper/rangekeeper/config"
)

// DefaultInterval is the discovery poll interval when the config sets none.
const DefaultInterval = 2 * time.Second

// Backend is one Proxmox VE API endpoint.
type Backend struct {
	name          string
	client        *pve.Client
	interval      time.Duration
	maxInterval   time.Duration
	showTemplates bool
	taskTimeout   time.Duration
	cacheTTL      time.Duration

	// rootInsecure: the endpoint is reached as root@pam with TLS verification off (PVE-T02).
	rootInsecure bool

	mu        sync.Mutex
	simulated bool
	probed    bool // /version read (tells the simulator apart)
	configs   map[int]cachedVM
	sdn       *sdnView
	// last is the newest discovery and the resource list it was grouped from: a refresh that
	// finds the same list and no changed config or SDN returns it as is (no regrouping, no
	// posture, nothing for Watch to compare).
	last    *fleet
	lastRes []resource
}

var (
	_ backends.Backend     = (*Backend)(nil)
	_ backends.Snapshotter = (*Backend)(nil)
	_ backends.Reverter    = (*Backend)(nil)
	_ backends.TearDowner  = (*Backend)(nil)
	_ backends.Executor    = (*Backend)(nil)
	_ backends.Copier      = (*Backend)(nil)
	_ backends.Explainer   = (*Backend)(nil)
)

// New connects to the endpoint described by cfg. Secrets are read here from the named
// environment variable or file and handed to the client; they are never stored elsewhere or
// logged, and errors name the variable or file, never the value.
func New(cfg config.ProxmoxEndpoint) (*Backend, error) {
	return newBackend(cfg, nil, "")
}

// newBackend builds the client; hc and secret override the HTTP client and token secret (used
// for the in-process demo simulator, whose secret lives only in memory).
func newBackend(cfg config.ProxmoxEndpoint, hc *http.Client, secret string) (*Backend, error) {
	if cfg.Name == "" {
		return nil, errors.New("proxmox endpoint: name is required")
	}
	where := "proxmox endpoint " + cfg.Name
	base, err := apiBase(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	opts := []pve.Option{pve.WithTimeout(30 * time.Second), pve.WithUserAgent("rangekeeper")}
	if hc != nil {
		opts = append(opts, pve.WithHTTPClient(hc))
	}
	switch {
	case cfg.CAFile != "":
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s: ca_file: %w", where, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: ca_file %s: no PEM certificate found", where, cfg.CAFile)
		}
		opts = append(opts, pve.WithRootCAs(pool))
	case cfg.Insecure:
		opts = append(opts, pve.WithInsecureSkipVerify())
	}
	switch {
	case cfg.TokenID != "":
		if secret == "" {
			secret, err = readSecret(cfg.TokenSecretEnv, cfg.TokenSecretFile)
			if err != nil {
				return nil, fmt.Errorf("%s: token secret: %w", where, err)
			}
		}
		opts = append(opts, pve.WithAPIToken(cfg.TokenID, secret))
	case cfg.User != "":
		pw, err := readSecret(cfg.PasswordEnv, cfg.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%s: password: %w", where, err)
		}
		user := cfg.User
		if !strings.Contains(user, "@") {
			realm := cfg.Realm
			if realm == "" {
				realm = "pam"
			}
			user += "@" + realm
		}
		opts = append(opts, pve.WithCredentials(&pve.Credentials{Username: user, Password: pw}))
	default:
		return nil, fmt.Errorf("%s: set token_id (with token_secret_env or token_secret_file) or user (with password_env or password_file)", where)
	}
	rootUser := cfg.User == "root@pam" || (cfg.User == "root" && (cfg.Realm == "" || cfg.Realm == "pam"))
	interval := cfg.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Backend{
		name:          cfg.Name,
		client:        pve.NewClient(base, opts...),
		interval:      interval,
		maxInterval:   max(30*time.Second, 4*interval),
		showTemplates: cfg.ShowTemplates,
		taskTimeout:   5 * time.Minute,
		cacheTTL:      30 * time.Second,
		configs:       map[int]cachedVM{},
		rootInsecure:  rootUser && cfg.Insecure && cfg.TokenID == "",
	}, nil
}

// apiBase turns "https://pve:8006" or ".../api2/json" into the client's base URL.
func apiBase(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("url is required (e.g. https://pve.example:8006)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("url %q: want https://host:8006", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, "/api2/json") {
		p += "/api2/json"
	}
	u.Path = p
	return u.String(), nil
}

// readSecret reads a secret from an environment variable or a file (env wins when both are set).
func readSecret(env, file string) (string, error) {
	if env != "" {
		if v := os.Getenv(env); v != "" {
			return v, nil
		}
		if file == "" {
			return "", fmt.Errorf("environment variable %s is empty or unset", env)
		}
	}
	if path, id, ok := strings.Cut(file, "#"); ok && id != "" {
		if _, err := os.Stat(file); err != nil { // not a plain file whose name has a '#'
			return instancePassword(path, id) // an instance of Inspect's PROXMOX_CONFIG_FILE
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", file, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("file %s is empty", file)
		}
		return v, nil
	}
	return "", errors.New("no secret source configured")
}

// Name is "pve:<endpoint name>".
func (b *Backend) Name() string { return "pve:" + b.name }

// Kind is backends.KindProxmox.
func (b *Backend) Kind() backends.Kind { return backends.KindProxmox }

// Client exposes the go-proxmox client for callers that need an endpoint rangekeeper does not wrap.
func (b *Backend) Client() *pve.Client { return b.client }

// Unsupported explains the actions Proxmox handles differently.
func (b *Backend) Unsupported(a backends.Action) string {
	if a == backends.ActionReset {
		return "reset: use revert (native snapshots)"
	}
	if a == backends.ActionShell {
		return ShellUnsupported
	}
	return ""
}

// SetTaskTimeout bounds how long an action waits for each PVE task (default 5 minutes).
func (b *Backend) SetTaskTimeout(d time.Duration) {
	if d > 0 {
		b.taskTimeout = d
	}
}

// NewSimulated connects to an in-process pvesim server (the demo range or tests): the token
// secret is taken from the simulator in memory and the simulator's certificate is trusted.
func NewSimulated(name string, sim *pvesim.Server) (*Backend, error) {
	cfg := config.ProxmoxEndpoint{Name: name, URL: sim.URL(), TokenID: sim.TokenID()}
	// A client of our own over the simulator's transport: go-proxmox's options mutate it.
	return newBackend(cfg, &http.Client{Transport: sim.HTTPClient().Transport}, sim.TokenSecret())
}

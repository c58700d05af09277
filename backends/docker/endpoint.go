package docker

import (
	"github.com/rangekeeper/rangekeeper/internal/redact"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/moby/client"
)

// Endpoint says which engine to talk to. Empty fields fall back to the environment the docker
// CLI honours: DOCKER_HOST, then DOCKER_CONTEXT, then the config's currentContext, then the
// platform default socket.
type Endpoint struct {
	Name    string // shown to operators; defaults to the context name or "default"
	Context string
	Host    string
}

// Resolve fills Host and Name from the environment and Docker contexts.
func (e Endpoint) Resolve() (Endpoint, error) {
	if e.Host != "" {
		if e.Name == "" {
			e.Name = redact.Text(e.Host) // a name is shown and journaled: never a password in a URL
		}
		return e, nil
	}
	ctxName := e.Context
	if ctxName == "" {
		if h := os.Getenv("DOCKER_HOST"); h != "" {
			e.Host = h
			if e.Name == "" {
				e.Name = "default"
			}
			return e, nil
		}
		ctxName = os.Getenv("DOCKER_CONTEXT")
	}
	if ctxName == "" {
		ctxName = currentContext()
	}
	if ctxName != "" && ctxName != "default" {
		host, err := contextHost(ctxName)
		if err != nil {
			return e, err
		}
		e.Host = host
	}
	if e.Host == "" {
		e.Host = client.DefaultDockerHost
	}
	if e.Name == "" {
		e.Name = ctxName
		if e.Name == "" {
			e.Name = "default"
		}
	}
	return e, nil
}

func dockerConfigDir() string {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".docker")
}

func currentContext() string {
	raw, err := os.ReadFile(filepath.Join(dockerConfigDir(), "config.json"))
	if err != nil {
		return ""
	}
	var cfg struct {
		CurrentContext string `json:"currentContext"`
	}
	if json.Unmarshal(raw, &cfg) != nil {
		return ""
	}
	return cfg.CurrentContext
}

// contextHost reads the docker endpoint of a named context from the CLI's context store, where
// each context lives at contexts/meta/<sha256(name)>/meta.json.
func contextHost(name string) (string, error) {
	sum := sha256.Sum256([]byte(name))
	path := filepath.Join(dockerConfigDir(), "contexts", "meta", hex.EncodeToString(sum[:]), "meta.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("docker context %q not found (looked in %s)", name, path)
		}
		return "", fmt.Errorf("docker context %q: %w", name, err)
	}
	var meta struct {
		Endpoints map[string]struct {
			Host string `json:"Host"`
		} `json:"Endpoints"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return "", fmt.Errorf("docker context %q: %s: %w", name, path, err)
	}
	host := meta.Endpoints["docker"].Host
	if host == "" {
		return "", fmt.Errorf("docker context %q has no docker endpoint", name)
	}
	return host, nil
}

// NewClient connects to the resolved endpoint with API version negotiation (so engines as old as
// API 1.40 work). TLS settings come from DOCKER_CERT_PATH / DOCKER_TLS_VERIFY as the CLI does.
func NewClient(e Endpoint) (*client.Client, error) {
	opts := []client.Opt{client.WithHost(e.Host)} // API-version negotiation is the default
	if os.Getenv("DOCKER_CERT_PATH") != "" {
		opts = append(opts, client.WithTLSClientConfigFromEnv())
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker %s (%s): %w", e.Name, redact.Text(e.Host), err)
	}
	return c, nil
}

// Package config loads rangekeeper's operator configuration file (backends, probe targets,
// read-only mode, key remapping, theme), strictly: unknown keys are errors naming file and line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize bounds the config file; anything larger is refused rather than read.
const MaxFileSize = 1 << 20

// Config is the whole file. Zero value is a usable default (local Docker only).
type Config struct {
	ReadOnly   bool              `yaml:"read_only"`
	Theme      string            `yaml:"theme"` // auto | dark | light | dark16 | light16 | none
	Keys       map[string]string `yaml:"keys"`  // binding name → comma-separated keys
	Docker     []DockerEndpoint  `yaml:"docker"`
	Kubernetes KubernetesConfig  `yaml:"kubernetes"`
	Proxmox    []ProxmoxEndpoint `yaml:"proxmox"`
	Probe      ProbeTargets      `yaml:"probe"`
	Lint       LintConfig        `yaml:"lint"`
	Watch      WatchConfig       `yaml:"watch"` // containment watch: alert threshold and hook

	// Log views and the timeline's retention.
	Logs     LogsConfig     `yaml:"logs"`
	Timeline TimelineConfig `yaml:"timeline"`

	// The team daemon's socket: how many command lines it runs at once.
	Serve ServeConfig `yaml:"serve"`

	// Where Inspect's running evals keep the data that links sandboxes to samples.
	Inspect InspectConfig `yaml:"inspect"`

	// Where the file said what, for errors found after loading (a key binding the workbench
	// does not know): "keys.<name>" and top-level keys → line.
	source string
	lines  map[string]int
}

// Themes are the theme names the file may give (views/theme.Pick reads them).
var Themes = []string{"", "auto", "dark", "dark256", "light", "light256", "dark16", "light16", "none"}

// Source is the file the config was read from ("" for the built-in default).
func (c *Config) Source() string { return c.source }

// At names where key (e.g. "keys.snapshot", "theme") was set: "file:line", or the file alone.
func (c *Config) At(key string) string {
	if n := c.lines[key]; n > 0 {
		return fmt.Sprintf("%s:%d", c.source, n)
	}
	return c.source
}

// DockerEndpoint selects an engine by context name or host URL; both empty means the
// environment (DOCKER_HOST, DOCKER_CONTEXT, the current context, then the local socket).
type DockerEndpoint struct {
	Name    string `yaml:"name"`
	Context string `yaml:"context"`
	Host    string `yaml:"host"`
}

// KubernetesConfig selects kubeconfig contexts and namespaces.
type KubernetesConfig struct {
	Enabled    bool     `yaml:"enabled"`
	Kubeconfig string   `yaml:"kubeconfig"`
	Contexts   []string `yaml:"contexts"`
	Namespaces []string `yaml:"namespaces"`
	InCluster  bool     `yaml:"in_cluster"`
}

// ProxmoxEndpoint is one PVE API. Secrets are never in the file: they are read from the named
// environment variable or file at connect time and never stored.
type ProxmoxEndpoint struct {
	Name            string        `yaml:"name"`
	URL             string        `yaml:"url"`
	TokenID         string        `yaml:"token_id"`
	TokenSecretEnv  string        `yaml:"token_secret_env"`
	TokenSecretFile string        `yaml:"token_secret_file"`
	User            string        `yaml:"user"`
	Realm           string        `yaml:"realm"`
	PasswordEnv     string        `yaml:"password_env"`
	PasswordFile    string        `yaml:"password_file"`
	CAFile          string        `yaml:"ca_file"`
	Insecure        bool          `yaml:"insecure_skip_verify"`
	Interval        time.Duration `yaml:"interval"`
	ShowTemplates   bool          `yaml:"show_templates"`
}

// ProbeTargets are the only network destinations the escape probe may contact.
// There are no built-in targets: empty lists mean "not tested".
type ProbeTargets struct {
	Egress   []string      `yaml:"egress"`   // host:port, TCP (prefix "udp:" for UDP)
	DNS      []string      `yaml:"dns"`      // canary names that must NOT resolve
	Scorer   []string      `yaml:"scorer"`   // host:port of scorer / ledger endpoints
	Metadata []string      `yaml:"metadata"` // host:port of metadata endpoints to check
	Timeout  time.Duration `yaml:"timeout"`  // per check
}

// DefaultPath is $XDG_CONFIG_HOME/rangekeeper/config.yaml.
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "rangekeeper", "config.yaml")
}

// Load reads path. A missing file at the default path yields the zero Config; a missing file
// that was asked for explicitly is an error.
func Load(path string, explicit bool) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return &Config{}, nil
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if len(raw) > MaxFileSize {
		return nil, fmt.Errorf("config %s: larger than %d bytes; refusing to read", path, MaxFileSize)
	}
	return Parse(path, raw)
}

// Parse decodes raw strictly; name is used in errors.
func Parse(name string, raw []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		return nil, fmt.Errorf("config %s:%d: a second YAML document; rangekeeper reads one document per config file", name, docLine(&second))
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	c.source, c.lines = name, lines(raw)
	if !slices.Contains(Themes, c.Theme) {
		return nil, fmt.Errorf("config %s: theme %q is not a theme (want one of %s)", c.At("theme"), c.Theme, strings.Join(Themes[1:], ", "))
	}
	return &c, nil
}

// lines maps top-level keys and the keys of the keys: section to their lines.
func lines(raw []byte) map[string]int {
	out := map[string]int{}
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return out
	}
	top := doc.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		out[top[i].Value] = top[i].Line
		if top[i].Value == "keys" && top[i+1].Kind == yaml.MappingNode {
			ks := top[i+1].Content
			for j := 0; j+1 < len(ks); j += 2 {
				out["keys."+ks[j].Value] = ks[j].Line
			}
		}
	}
	return out
}

func docLine(n *yaml.Node) int {
	if n.Line > 0 {
		return n.Line
	}
	if len(n.Content) > 0 {
		return n.Content[0].Line
	}
	return 0
}

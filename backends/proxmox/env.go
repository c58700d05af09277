package proxmox

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/rangekeeper/rangekeeper/config"
)

// EnvEndpoint is one Proxmox instance described the way Inspect's proxmox provider reads it.
// Password names where the password is (an env var or a file), never the value.
type EnvEndpoint struct {
	Endpoint config.ProxmoxEndpoint
	// Node is Inspect's PROXMOX_NODE / instance "node" (informational; discovery is cluster-wide).
	Node string
}

// FromEnv reads Inspect's Proxmox settings: PROXMOX_CONFIG_FILE (JSON {"instances":[...]}) for
// several instances, else PROXMOX_HOST/PORT/USER/REALM/PASSWORD/VERIFY_TLS for one. It returns
// nothing when neither is set. Passwords are not copied: an endpoint names PROXMOX_PASSWORD, or
// "<config file>#<instance_id>", and the password is read from there at connect time.
func FromEnv() ([]EnvEndpoint, error) {
	if path := os.Getenv("PROXMOX_CONFIG_FILE"); path != "" {
		return fromConfigFile(path)
	}
	host := os.Getenv("PROXMOX_HOST")
	if host == "" {
		return nil, nil
	}
	port := envOr("PROXMOX_PORT", "8006")
	if _, err := strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("PROXMOX_PORT %q: not a port number", port)
	}
	ep := config.ProxmoxEndpoint{
		Name:        "inspect",
		URL:         "https://" + net.JoinHostPort(host, port),
		User:        envOr("PROXMOX_USER", "root"),
		Realm:       envOr("PROXMOX_REALM", "pam"),
		PasswordEnv: "PROXMOX_PASSWORD",
		Insecure:    !truthyEnv(envOr("PROXMOX_VERIFY_TLS", "1")),
	}
	return []EnvEndpoint{{Endpoint: ep, Node: envOr("PROXMOX_NODE", "proxmox")}}, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func truthyEnv(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return false
	}
	return true
}

// inspectInstance is ProxmoxInstanceConfig from inspect_proxmox_sandbox's schema.py.
type inspectInstance struct {
	InstanceID string `json:"instance_id"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Node       string `json:"node"`
	User       string `json:"user"`
	UserRealm  string `json:"user_realm"`
	Password   string `json:"password"`
	VerifyTLS  *bool  `json:"verify_tls"`
}

// fromConfigFile parses PROXMOX_CONFIG_FILE; each endpoint's password_file is "<path>#<id>".
func fromConfigFile(path string) ([]EnvEndpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("PROXMOX_CONFIG_FILE: %w", err)
	}
	var doc struct {
		Instances []inspectInstance `json:"instances"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("PROXMOX_CONFIG_FILE %s: %s", path, jsonErrorWhere(raw, err))
	}
	if len(doc.Instances) == 0 {
		return nil, fmt.Errorf("PROXMOX_CONFIG_FILE %s: no instances", path)
	}
	var out []EnvEndpoint
	seen := map[string]bool{}
	for i, in := range doc.Instances {
		if in.Host == "" {
			return nil, fmt.Errorf("PROXMOX_CONFIG_FILE %s: instances[%d]: host is required", path, i)
		}
		id := in.InstanceID
		if id == "" {
			id = fmt.Sprintf("inspect%d", i)
		}
		if seen[id] {
			return nil, fmt.Errorf("PROXMOX_CONFIG_FILE %s: instances[%d]: duplicate instance_id %q", path, i, id)
		}
		seen[id] = true
		port := in.Port
		if port == 0 {
			port = 8006
		}
		user, realm := in.User, in.UserRealm
		if user == "" {
			user = "root"
		}
		if realm == "" {
			realm = "pam"
		}
		ep := config.ProxmoxEndpoint{
			Name:         id,
			URL:          "https://" + net.JoinHostPort(in.Host, strconv.Itoa(port)),
			User:         user,
			Realm:        realm,
			PasswordFile: path + "#" + id, // resolved by readSecret's JSON-instance form
			Insecure:     in.VerifyTLS != nil && !*in.VerifyTLS,
		}
		out = append(out, EnvEndpoint{Endpoint: ep, Node: in.Node})
	}
	return out, nil
}

// instancePassword reads one instance's password from an Inspect config file at connect time.
func instancePassword(path, id string) (string, error) {
	eps, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var doc struct {
		Instances []inspectInstance `json:"instances"`
	}
	if err := json.Unmarshal(eps, &doc); err != nil {
		return "", fmt.Errorf("%s: %s", path, jsonErrorWhere(eps, err))
	}
	for i, in := range doc.Instances {
		iid := in.InstanceID
		if iid == "" {
			iid = fmt.Sprintf("inspect%d", i)
		}
		if iid == id {
			if in.Password == "" {
				return "", fmt.Errorf("%s: instance %s has no password", path, id)
			}
			return in.Password, nil
		}
	}
	return "", fmt.Errorf("%s: no instance %s", path, id)
}

// jsonErrorWhere adds the line of a JSON syntax or type error.
func jsonErrorWhere(raw []byte, err error) string {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 {
		return err.Error()
	}
	line := 1 + strings.Count(string(raw[:min(int(off), len(raw))]), "\n")
	return fmt.Sprintf("line %d: %v", line, err)
}

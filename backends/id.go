package backends

import (
	"fmt"
	"strings"
)

// ID is a parsed sandbox ID: "<kind>:<endpoint>/<path>". The endpoint is whatever names the
// backend instance (a docker context, a kubeconfig context, a Proxmox config name) and may itself
// contain "/" and ":" (an EKS context is "arn:aws:eks:eu-west-2:123:cluster/prod"), so the path
// is taken from the right: its segment count is fixed per kind and no segment contains "/".
type ID struct {
	Kind     Kind
	Endpoint string
	Path     []string // docker: [project]; k8s: [namespace, release]; pve: [group]
}

// pathSegments is how many "/"-separated segments end an ID of each kind.
var pathSegments = map[Kind]int{KindDocker: 1, KindKubernetes: 2, KindProxmox: 1}

// ParseID splits a sandbox ID. It fails on an unknown kind or a missing path, never guesses.
func ParseID(s string) (ID, error) {
	kind, rest, ok := strings.Cut(s, ":")
	n, known := pathSegments[Kind(kind)]
	if !ok || !known {
		return ID{}, fmt.Errorf("%q is not a sandbox ID (want docker:…, k8s:… or pve:…)", s)
	}
	parts := strings.Split(rest, "/")
	if len(parts) < n+1 {
		return ID{}, fmt.Errorf("%q is not a %s sandbox ID (want %s)", s, kind, idShape[Kind(kind)])
	}
	id := ID{Kind: Kind(kind), Endpoint: strings.Join(parts[:len(parts)-n], "/"), Path: parts[len(parts)-n:]}
	if id.Endpoint == "" {
		return ID{}, fmt.Errorf("%q is not a %s sandbox ID: empty endpoint (want %s)", s, kind, idShape[Kind(kind)])
	}
	for _, p := range id.Path {
		if p == "" {
			return ID{}, fmt.Errorf("%q is not a %s sandbox ID: empty segment (want %s)", s, kind, idShape[Kind(kind)])
		}
	}
	return id, nil
}

var idShape = map[Kind]string{
	KindDocker:     "docker:<endpoint>/<project>",
	KindKubernetes: "k8s:<context>/<namespace>/<release>",
	KindProxmox:    "pve:<endpoint>/<group>",
}

// Backend is the name of the backend instance that owns the sandbox ("k8s:<context>").
func (id ID) Backend() string { return string(id.Kind) + ":" + id.Endpoint }

// Name is the last path segment: the compose project, the release or the VM group.
func (id ID) Name() string { return id.Path[len(id.Path)-1] }

// Rest is the path after the backend name ("<namespace>/<release>").
func (id ID) Rest() string { return strings.Join(id.Path, "/") }

// String reassembles the ID.
func (id ID) String() string { return id.Backend() + "/" + id.Rest() }

// ShortName is the name part of a sandbox ID for narrow displays, or s itself when it does not
// parse.
func ShortName(s string) string {
	if id, err := ParseID(s); err == nil {
		return id.Name()
	}
	return s
}

// BackendOf is the owning backend's name of a sandbox ID, or s itself when it does not parse.
func BackendOf(s string) string {
	if id, err := ParseID(s); err == nil {
		return id.Backend()
	}
	return s
}

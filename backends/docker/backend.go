package docker

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Compose labels rangekeeper reads (docker/compose pkg/api/labels.go).
const (
	LabelProject   = "com.docker.compose.project"
	LabelService   = "com.docker.compose.service"
	LabelNumber    = "com.docker.compose.container-number"
	LabelOneoff    = "com.docker.compose.oneoff"
	LabelDependsOn = "com.docker.compose.depends_on"
	LabelNetwork   = "com.docker.compose.network"
	LabelVolume    = "com.docker.compose.volume"
	LabelSnapshot  = "dev.rangekeeper.snapshot"
)

// inspectProject is Inspect's own recognition pattern for its compose projects.
var inspectProject = regexp.MustCompile(`^inspect-[a-z\d\-_]*-i[a-z\d]{6,}$`)

// IsInspectProject reports whether a compose project name is one Inspect made.
func IsInspectProject(name string) bool { return inspectProject.MatchString(name) }

// TaskHint derives the (truncated, normalised) task name Inspect embedded in a project name.
func TaskHint(project string) string {
	if !IsInspectProject(project) {
		return ""
	}
	rest := strings.TrimPrefix(project, "inspect-")
	i := strings.LastIndex(rest, "-i")
	if i < 0 {
		return ""
	}
	return rest[:i]
}

// Options tune discovery.
type Options struct {
	// All lists plain containers without compose labels as non-sandbox resources (never actionable).
	All bool
	// Snapshots keeps snapshot records and volume archives; without it Snapshot, Snapshots,
	// DeleteSnapshot and Revert say they need one.
	Snapshots backends.SnapshotStore
	// RuntimePolicy grades live CMP-H26 (the config's lint.policy.sandboxed_runtime; "" is
	// recommended).
	RuntimePolicy catalog.RuntimePolicy
}

// Backend is one Docker Engine.
type Backend struct {
	ep   Endpoint
	cli  *client.Client
	opts Options

	postureMu    sync.Mutex
	postureCache map[string][]backends.Finding // container ID → findings; configs are immutable

	networkMu    sync.Mutex
	networkCache map[string]networkFacts // network ID → what live posture needs (posture.go)

	factsMu sync.Mutex
	facts   *EngineFacts // read once (EngineFacts)

	execs execLines // recent exec command lines per sandbox, memory only (execlines.go)
}

// New connects lazily to ep (no I/O until Watch or an action).
func New(ep Endpoint, opts Options) (*Backend, error) {
	ep, err := ep.Resolve()
	if err != nil {
		return nil, err
	}
	cli, err := NewClient(ep)
	if err != nil {
		return nil, err
	}
	return &Backend{ep: ep, cli: cli, opts: opts, postureCache: map[string][]backends.Finding{}}, nil
}

// Name is "docker:<endpoint>".
func (b *Backend) Name() string { return "docker:" + b.ep.Name }

// Kind is docker.
func (b *Backend) Kind() backends.Kind { return backends.KindDocker }

// Endpoint returns the resolved endpoint.
func (b *Backend) Endpoint() Endpoint { return b.ep }

// Client exposes the engine client to this package's actions and to tests.
func (b *Backend) Client() *client.Client { return b.cli }

// Close releases the connection.
func (b *Backend) Close() error { return b.cli.Close() }

// SandboxID returns the ID of a compose project on this engine.
func (b *Backend) SandboxID(project string) string { return b.Name() + "/" + project }

const plainPrefix = "container:"

// ProjectOf parses a sandbox ID of this backend into its compose project name. Plain containers
// (listed with --all) and foreign IDs yield ErrNotSandbox / ErrNotFound.
func (b *Backend) ProjectOf(sandboxID string) (string, error) {
	rest, ok := strings.CutPrefix(sandboxID, b.Name()+"/")
	if !ok {
		return "", fmt.Errorf("%w: %s is not on %s", backends.ErrNotFound, sandboxID, b.Name())
	}
	if strings.HasPrefix(rest, plainPrefix) {
		return "", fmt.Errorf("%w (%s has no compose labels)", backends.ErrNotSandbox, rest)
	}
	if rest == "" {
		return "", fmt.Errorf("%w: empty project in %s", backends.ErrNotFound, sandboxID)
	}
	return rest, nil
}

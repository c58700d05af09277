// Package composeup stands a Compose project up on a Docker Engine through the Engine API, from
// the compose-go model (no compose CLI), with the compose labels rangekeeper's Docker backend
// (and `docker compose ls`) recognise, and removes it again by label. It covers what sandbox
// specs use — networks, volumes, healthchecks, depends_on conditions, shared namespaces,
// hardening keys — and refuses what it cannot reproduce faithfully with a clear error.
package composeup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// ErrUnsupported marks a spec feature composeup cannot stand up faithfully (it names the key).
var ErrUnsupported = errors.New("not supported by the Engine API stand-up")

// ErrImageMissing marks an image that is neither present on the engine nor allowed to be pulled.
var ErrImageMissing = errors.New("image not present on the engine")

// LoadError is a spec that compose-go cannot load: unreadable, invalid or failing interpolation.
type LoadError struct {
	File string
	Err  error
}

func (e *LoadError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Load reads a compose file the way `docker compose config` would: includes, extends, anchors,
// profiles (none active) and ${VAR} interpolation from env only (never the caller's process
// environment, so what a CI job verifies does not depend on stray variables). env_file entries
// are read relative to the file, as compose does.
func Load(ctx context.Context, path string, env map[string]string, project string) (*types.Project, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &LoadError{File: path, Err: err}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &LoadError{File: path, Err: err}
	}
	mapping := types.Mapping{}
	for k, v := range env {
		mapping[k] = v
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs, Content: data}},
		Environment: mapping,
	}
	p, err := loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		o.SetProjectName(project, true)
		o.ResolvePaths = true
	})
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), abs, path)
		return nil, &LoadError{File: path, Err: errors.New(msg)}
	}
	return p, nil
}

// ResourceName is the engine name of a project-scoped network or volume. Names are always
// prefixed with the project, even when the spec sets `name:`, so parallel stand-ups of the same
// spec never collide.
func ResourceName(project, key string) string { return project + "_" + key }

// ContainerName is the engine name of a service's n-th container.
func ContainerName(project, service string, n int) string {
	return fmt.Sprintf("%s-%s-%d", project, service, n)
}

// unsupported wraps ErrUnsupported with the key that triggered it.
func unsupported(service, key, why string) error {
	if why != "" {
		why = ": " + why
	}
	return fmt.Errorf("services.%s.%s%s: %w", service, key, why, ErrUnsupported)
}

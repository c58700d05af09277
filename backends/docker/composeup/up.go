package composeup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"sync"

	"github.com/compose-spec/compose-go/v2/graph"
	"github.com/compose-spec/compose-go/v2/types"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker"
)

// Options tune a stand-up.
type Options struct {
	// Labels are added to every container, network and volume created (e.g. a run label that
	// Down later selects on).
	Labels map[string]string
	// DNS replaces the resolvers of every container that has its own resolv.conf (nil: as the
	// spec says).
	DNS []netip.Addr
	// Pull lets the engine pull images that are not present; otherwise a missing image is
	// ErrImageMissing.
	Pull bool
	// Progress, when set, receives one line per resource created.
	Progress func(string)
}

// Network is one network a project's services join.
type Network struct {
	Key      string       `json:"key"`  // name in the compose file
	Name     string       `json:"name"` // engine name
	ID       string       `json:"id"`
	Internal bool         `json:"internal"`
	External bool         `json:"external"` // not created (and never removed) by composeup
	Gateways []netip.Addr `json:"gateways,omitempty"`
}

// Container is one service container.
type Container struct {
	Service string `json:"service"`
	Number  int    `json:"number"`
	ID      string `json:"id"`
	Name    string `json:"name"`
}

// Stack is what Up created, for waiting, probing and reporting; Down works from labels, not
// from a Stack, so a crash between create and record still leaves nothing behind.
type Stack struct {
	Project    string      `json:"project"`
	Networks   []Network   `json:"networks"`
	Volumes    []string    `json:"volumes"`
	Containers []Container `json:"containers"`

	// awaited lists services that a dependent waits for to complete (one-shot init services).
	awaited map[string]bool
	mu      sync.Mutex
}

// Service returns a service's containers in number order.
func (s *Stack) Service(name string) []Container {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Container
	for _, c := range s.Containers {
		if c.Service == name {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// Network returns the network with compose key k.
func (s *Stack) Network(k string) (Network, bool) {
	for _, n := range s.Networks {
		if n.Key == k {
			return n, true
		}
	}
	return Network{}, false
}

func (s *Stack) add(c Container) {
	s.mu.Lock()
	s.Containers = append(s.Containers, c)
	s.mu.Unlock()
}

// Up creates the project's networks and volumes and then its containers in dependency order,
// honouring depends_on conditions (service_healthy, service_completed_successfully). It returns
// what it created so far together with any error.
func Up(ctx context.Context, cli *client.Client, p *types.Project, o Options) (*Stack, error) {
	st := &Stack{Project: p.Name, Networks: []Network{}, Volumes: []string{}, Containers: []Container{}, awaited: map[string]bool{}}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	if err := ensureImages(ctx, cli, p, o.Pull); err != nil {
		return st, err
	}
	r := refs{project: p.Name, networks: map[string]string{}, volumes: map[string]string{}, secrets: p.Secrets, configs: p.Configs}
	if err := createNetworks(ctx, cli, p, o.Labels, st, r.networks, say); err != nil {
		return st, err
	}
	if err := createVolumes(ctx, cli, p, o.Labels, st, r.volumes, say); err != nil {
		return st, err
	}
	r.containers = func(service string) (string, error) {
		cs := st.Service(service)
		if len(cs) == 0 {
			return "", fmt.Errorf("service %q has no container (yet)", service)
		}
		return cs[0].ID, nil
	}
	for _, s := range p.Services {
		for dep, c := range s.DependsOn {
			if c.Condition == types.ServiceConditionCompletedSuccessfully {
				st.awaited[dep] = true
			}
		}
	}
	err := graph.InDependencyOrder(ctx, p, func(ctx context.Context, name string, s types.ServiceConfig) (err error) {
		// The walk runs visitors in goroutines of its own: a panic there would kill the process
		// before the caller's teardown, so it becomes this service's error.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("services.%s: internal error: %v", name, r)
			}
		}()
		if err := awaitDependencies(ctx, cli, st, s); err != nil {
			return err
		}
		for n := 1; n <= replicas(s); n++ {
			if err := startContainer(ctx, cli, p, s, n, o, r, st); err != nil {
				return err
			}
			say("started %s", ContainerName(p.Name, s.Name, n))
		}
		return nil
	})
	return st, err
}

func replicas(s types.ServiceConfig) int {
	if s.Scale != nil {
		return *s.Scale
	}
	if s.Deploy != nil && s.Deploy.Replicas != nil {
		return *s.Deploy.Replicas
	}
	return 1
}

// ensureImages checks every service image is on the engine (pulling when allowed) before
// anything is created, so a missing image fails fast with the service it belongs to.
func ensureImages(ctx context.Context, cli *client.Client, p *types.Project, pull bool) error {
	names := p.ServiceNames()
	sort.Strings(names)
	for _, name := range names {
		s := p.Services[name]
		if s.Image == "" {
			return fmt.Errorf("services.%s has no image (only build:); build and tag it first: %w", name, ErrImageMissing)
		}
		_, err := cli.ImageInspect(ctx, s.Image)
		if err == nil {
			continue
		}
		if !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("services.%s: inspect image %s: %w", name, s.Image, err)
		}
		if !pull || s.PullPolicy == types.PullPolicyNever {
			return fmt.Errorf("services.%s: %s: %w (pulling is off)", name, s.Image, ErrImageMissing)
		}
		rc, err := cli.ImagePull(ctx, s.Image, client.ImagePullOptions{})
		if err != nil {
			return fmt.Errorf("services.%s: pull %s: %w", name, s.Image, err)
		}
		_, _ = io.Copy(io.Discard, rc)
		rc.Close()
		if _, err := cli.ImageInspect(ctx, s.Image); err != nil {
			return fmt.Errorf("services.%s: pull %s: %w", name, s.Image, ErrImageMissing)
		}
	}
	return nil
}

func merged(base map[string]string, extra ...map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for _, e := range extra {
		for k, v := range e {
			out[k] = v
		}
	}
	return out
}

// usedNetworks lists the network keys some service joins (compose creates only those).
func usedNetworks(p *types.Project) []string {
	used := map[string]bool{}
	for _, s := range p.Services {
		if s.NetworkMode != "" {
			continue
		}
		for k := range s.Networks {
			used[k] = true
		}
	}
	return slices.Sorted(maps.Keys(used))
}

func createNetworks(ctx context.Context, cli *client.Client, p *types.Project, labels map[string]string, st *Stack, names map[string]string, say func(string, ...any)) error {
	for _, key := range usedNetworks(p) {
		def, ok := p.Networks[key]
		if !ok {
			return fmt.Errorf("network %q is used by a service but not defined", key)
		}
		n := Network{Key: key, Internal: def.Internal, External: bool(def.External)}
		if n.External {
			n.Name = def.Name
			if n.Name == "" {
				n.Name = key
			}
		} else {
			n.Name = ResourceName(p.Name, key)
			opts := client.NetworkCreateOptions{
				Driver: def.Driver, Internal: def.Internal, Attachable: def.Attachable, EnableIPv6: def.EnableIPv6,
				EnableIPv4: def.EnableIPv4, Options: def.DriverOpts,
				Labels: merged(def.Labels, labels, map[string]string{docker.LabelProject: p.Name, docker.LabelNetwork: key}),
			}
			if opts.Driver == "" {
				opts.Driver = "bridge"
			}
			if ipam := ipamConfig(def.Ipam); ipam != nil {
				opts.IPAM = ipam
			}
			res, err := cli.NetworkCreate(ctx, n.Name, opts)
			if err != nil {
				return fmt.Errorf("networks.%s: create %s: %w", key, n.Name, err)
			}
			n.ID = res.ID
			say("created network %s", n.Name)
		}
		ins, err := cli.NetworkInspect(ctx, n.Name, client.NetworkInspectOptions{})
		if err != nil {
			return fmt.Errorf("networks.%s: inspect %s: %w", key, n.Name, err)
		}
		n.ID = ins.Network.ID
		for _, c := range ins.Network.IPAM.Config {
			if c.Gateway.IsValid() {
				n.Gateways = append(n.Gateways, c.Gateway)
			}
		}
		names[key] = n.Name
		st.Networks = append(st.Networks, n)
	}
	return nil
}

func ipamConfig(c types.IPAMConfig) *network.IPAM {
	if c.Driver == "" && len(c.Config) == 0 {
		return nil
	}
	ipam := &network.IPAM{Driver: c.Driver, Options: c.Options}
	for _, pool := range c.Config {
		cfg := network.IPAMConfig{}
		if pfx, err := netip.ParsePrefix(pool.Subnet); err == nil {
			cfg.Subnet = pfx
		}
		if pfx, err := netip.ParsePrefix(pool.IPRange); err == nil {
			cfg.IPRange = pfx
		}
		if a, err := netip.ParseAddr(pool.Gateway); err == nil {
			cfg.Gateway = a
		}
		ipam.Config = append(ipam.Config, cfg)
	}
	return ipam
}

func createVolumes(ctx context.Context, cli *client.Client, p *types.Project, labels map[string]string, st *Stack, names map[string]string, say func(string, ...any)) error {
	for _, key := range slices.Sorted(maps.Keys(p.Volumes)) {
		def := p.Volumes[key]
		if def.External {
			name := def.Name
			if name == "" {
				name = key
			}
			if _, err := cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{}); err != nil {
				return fmt.Errorf("volumes.%s: external volume %s: %w", key, name, err)
			}
			names[key] = name
			continue
		}
		name := ResourceName(p.Name, key)
		_, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Driver: def.Driver, DriverOpts: def.DriverOpts,
			Labels: merged(def.Labels, labels, map[string]string{docker.LabelProject: p.Name, docker.LabelVolume: key})})
		if err != nil {
			return fmt.Errorf("volumes.%s: create %s: %w", key, name, err)
		}
		names[key] = name
		st.Volumes = append(st.Volumes, name)
		say("created volume %s", name)
	}
	return nil
}

func startContainer(ctx context.Context, cli *client.Client, p *types.Project, s types.ServiceConfig, n int, o Options, r refs, st *Stack) error {
	spec, err := buildCreate(p, s, n, o.Labels, o.DNS, r)
	if err != nil {
		return err
	}
	var nc *network.NetworkingConfig
	if spec.primary != "" {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{spec.primary: spec.endpoint[spec.primary]}}
	}
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: spec.name, Config: spec.config, HostConfig: spec.host, NetworkingConfig: nc})
	if err != nil {
		return fmt.Errorf("services.%s: create %s: %w", s.Name, spec.name, err)
	}
	st.add(Container{Service: s.Name, Number: n, ID: res.ID, Name: spec.name})
	netNames := make([]string, 0, len(spec.endpoint))
	for name := range spec.endpoint {
		if name != spec.primary {
			netNames = append(netNames, name)
		}
	}
	sort.Strings(netNames)
	for _, name := range netNames {
		if _, err := cli.NetworkConnect(ctx, name, client.NetworkConnectOptions{Container: res.ID, EndpointConfig: spec.endpoint[name]}); err != nil {
			return fmt.Errorf("services.%s: connect %s to %s: %w", s.Name, spec.name, name, err)
		}
	}
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("services.%s: start %s: %w", s.Name, spec.name, err)
	}
	return nil
}

// awaitDependencies blocks until every dependency of s meets its depends_on condition.
func awaitDependencies(ctx context.Context, cli *client.Client, st *Stack, s types.ServiceConfig) error {
	for _, d := range slices.Sorted(maps.Keys(s.DependsOn)) {
		cond := s.DependsOn[d].Condition
		if cond != types.ServiceConditionHealthy && cond != types.ServiceConditionCompletedSuccessfully {
			continue
		}
		for _, c := range st.Service(d) {
			err := waitContainer(ctx, cli, c, cond == types.ServiceConditionCompletedSuccessfully)
			if err != nil {
				return fmt.Errorf("services.%s: depends_on %s (%s): %w", s.Name, d, cond, err)
			}
		}
	}
	return nil
}

// NotReadyError is a container that will not become ready: it exited, or its healthcheck failed.
type NotReadyError struct {
	Service  string
	Name     string
	State    string
	Health   string
	ExitCode int
}

func (e *NotReadyError) Error() string {
	switch {
	case e.Health == "unhealthy":
		return fmt.Sprintf("%s (service %s) is unhealthy", e.Name, e.Service)
	case e.State == "exited" || e.State == "dead":
		return fmt.Sprintf("%s (service %s) exited with code %d", e.Name, e.Service, e.ExitCode)
	}
	return fmt.Sprintf("%s (service %s) is %s", e.Name, e.Service, e.State)
}

// ErrNotReady matches every NotReadyError.
var ErrNotReady = errors.New("container not ready")

func (e *NotReadyError) Is(target error) bool { return target == ErrNotReady }

package composeup

import (
	"fmt"
	"maps"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	units "github.com/docker/go-units"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"

	"github.com/rangekeeper/rangekeeper/backends/docker"
)

// createSpec is everything one ContainerCreate (plus the network connects after it) needs.
type createSpec struct {
	name     string
	config   *container.Config
	host     *container.HostConfig
	primary  string                               // network joined at create time ("" for a network_mode)
	endpoint map[string]*network.EndpointSettings // engine network name → endpoint, incl. primary
}

// refs resolves names the spec refers to into engine names and IDs.
type refs struct {
	project    string
	networks   map[string]string // compose key → engine name
	volumes    map[string]string // compose key → engine name
	containers func(service string) (string, error)
	secrets    map[string]types.SecretConfig
	configs    map[string]types.ConfigObjConfig
}

// unsupportedKeys are service keys whose effect composeup cannot reproduce; standing the spec up
// without them would verify a different sandbox than the one the spec describes.
func checkSupported(s types.ServiceConfig) error {
	switch {
	case s.Provider != nil:
		return unsupported(s.Name, "provider", "")
	case len(s.Models) > 0:
		return unsupported(s.Name, "models", "")
	case s.UseAPISocket:
		return unsupported(s.Name, "use_api_socket", "it mounts the engine socket and the caller's registry credentials")
	case len(s.Gpus) > 0:
		return unsupported(s.Name, "gpus", "")
	case s.Deploy != nil && s.Deploy.Resources.Reservations != nil && len(s.Deploy.Resources.Reservations.Devices) > 0:
		return unsupported(s.Name, "deploy.resources.reservations.devices", "")
	case len(s.PostStart) > 0 || len(s.PreStop) > 0 || len(s.PreStart) > 0:
		return unsupported(s.Name, "post_start/pre_stop hooks", "")
	case s.CredentialSpec != nil:
		return unsupported(s.Name, "credential_spec", "")
	}
	for _, v := range s.Volumes {
		switch v.Type {
		case types.VolumeTypeBind, types.VolumeTypeVolume, types.VolumeTypeTmpfs:
		default:
			return unsupported(s.Name, "volumes", "type "+v.Type)
		}
	}
	return nil
}

// buildCreate maps one service container to Engine API create options.
func buildCreate(p *types.Project, s types.ServiceConfig, n int, labels map[string]string, dns []netip.Addr, r refs) (createSpec, error) {
	if err := checkSupported(s); err != nil {
		return createSpec{}, err
	}
	name := ContainerName(p.Name, s.Name, n)
	lbl := map[string]string{}
	for k, v := range s.Labels {
		lbl[k] = v
	}
	deps := make([]string, 0, len(s.DependsOn))
	for d, c := range s.DependsOn {
		deps = append(deps, fmt.Sprintf("%s:%s:%t", d, c.Condition, c.Restart))
	}
	sort.Strings(deps)
	for k, v := range labels {
		lbl[k] = v
	}
	lbl[docker.LabelProject], lbl[docker.LabelService], lbl[docker.LabelNumber] = p.Name, s.Name, strconv.Itoa(n)
	lbl[docker.LabelOneoff], lbl[docker.LabelDependsOn] = "False", strings.Join(deps, ",")

	cfg := &container.Config{
		Image: s.Image, Labels: lbl, User: s.User, WorkingDir: s.WorkingDir,
		Hostname: s.Hostname, Domainname: s.DomainName, Tty: s.Tty, OpenStdin: s.StdinOpen,
		StopSignal: s.StopSignal, Env: environment(s.Environment),
	}
	if s.Entrypoint != nil {
		cfg.Entrypoint = []string(s.Entrypoint)
	}
	if s.Command != nil {
		cfg.Cmd = []string(s.Command)
	}
	if s.StopGracePeriod != nil {
		sec := int(time.Duration(*s.StopGracePeriod).Seconds())
		cfg.StopTimeout = &sec
	}
	if hc := s.HealthCheck; hc != nil {
		cfg.Healthcheck = healthcheck(hc)
	}

	host := &container.HostConfig{
		CapAdd: s.CapAdd, CapDrop: s.CapDrop, Privileged: s.Privileged, ReadonlyRootfs: s.ReadOnly,
		SecurityOpt: s.SecurityOpt, GroupAdd: s.GroupAdd, Init: s.Init, Runtime: s.Runtime,
		UsernsMode: container.UsernsMode(s.UserNSMode), Isolation: container.Isolation(s.Isolation),
		CgroupnsMode: container.CgroupnsMode(s.Cgroup), OomScoreAdj: int(s.OomScoreAdj),
		DNSOptions: s.DNSOpts, DNSSearch: s.DNSSearch, ExtraHosts: s.ExtraHosts.AsList(":"),
		ShmSize: int64(s.ShmSize), StorageOpt: s.StorageOpt, Umask: s.Umask,
		Sysctls: map[string]string(s.Sysctls), Tmpfs: tmpfs(s.Tmpfs),
		RestartPolicy: restart(s.Restart),
	}
	if err := resources(&host.Resources, s); err != nil {
		return createSpec{}, err
	}
	var err error
	if host.IpcMode, err = namespaceMode[container.IpcMode](s.Name, "ipc", s.Ipc, r); err != nil {
		return createSpec{}, err
	}
	if host.PidMode, err = namespaceMode[container.PidMode](s.Name, "pid", s.Pid, r); err != nil {
		return createSpec{}, err
	}
	if host.UTSMode, err = namespaceMode[container.UTSMode](s.Name, "uts", s.Uts, r); err != nil {
		return createSpec{}, err
	}
	if s.Logging != nil && s.Logging.Driver != "" {
		host.LogConfig = container.LogConfig{Type: s.Logging.Driver, Config: s.Logging.Options}
	}
	for _, d := range s.Devices {
		host.Devices = append(host.Devices, container.DeviceMapping{PathOnHost: d.Source, PathInContainer: d.Target, CgroupPermissions: d.Permissions})
	}
	host.DeviceCgroupRules = s.DeviceCgroupRules
	for _, vf := range s.VolumesFrom {
		src, mode, _ := strings.Cut(vf, ":")
		if !strings.HasPrefix(src, types.ContainerPrefix) {
			id, err := r.containers(src)
			if err != nil {
				return createSpec{}, fmt.Errorf("services.%s.volumes_from: %w", s.Name, err)
			}
			src = id
		} else {
			src = strings.TrimPrefix(src, types.ContainerPrefix)
		}
		if mode != "" {
			src += ":" + mode
		}
		host.VolumesFrom = append(host.VolumesFrom, src)
	}
	if err := mounts(host, s, r); err != nil {
		return createSpec{}, err
	}

	spec := createSpec{name: name, config: cfg, host: host, endpoint: map[string]*network.EndpointSettings{}}
	if err := networking(&spec, s, r); err != nil {
		return createSpec{}, err
	}
	// The DNS override only applies where the engine lets a container choose its resolvers;
	// containers sharing another's network namespace inherit its resolv.conf.
	if len(dns) > 0 && ownsResolvConf(host.NetworkMode) {
		host.DNS = dns
	}
	return spec, nil
}

// ownsResolvConf reports whether a container in this network mode gets its own resolv.conf
// (and so honours HostConfig.DNS).
func ownsResolvConf(m container.NetworkMode) bool {
	return !m.IsContainer() && !m.IsHost() && !m.IsNone()
}

func environment(env types.MappingWithEquals) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		if v != nil { // a bare name without a value in the environment is not set (as compose)
			out = append(out, k+"="+*v)
		}
	}
	sort.Strings(out)
	return out
}

func healthcheck(hc *types.HealthCheckConfig) *container.HealthConfig {
	if hc.Disable {
		return &container.HealthConfig{Test: []string{"NONE"}}
	}
	h := &container.HealthConfig{Test: hc.Test}
	if hc.Interval != nil {
		h.Interval = time.Duration(*hc.Interval)
	}
	if hc.Timeout != nil {
		h.Timeout = time.Duration(*hc.Timeout)
	}
	if hc.StartPeriod != nil {
		h.StartPeriod = time.Duration(*hc.StartPeriod)
	}
	if hc.Retries != nil {
		h.Retries = int(*hc.Retries)
	}
	return h
}

func tmpfs(list types.StringList) map[string]string {
	if len(list) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, t := range list {
		p, opts, _ := strings.Cut(t, ":")
		out[p] = opts
	}
	return out
}

func restart(policy string) container.RestartPolicy {
	name, count, _ := strings.Cut(policy, ":")
	rp := container.RestartPolicy{Name: container.RestartPolicyMode(name)}
	if name == "" {
		rp.Name = container.RestartPolicyDisabled
	}
	if n, err := strconv.Atoi(count); err == nil && rp.Name == container.RestartPolicyOnFailure {
		rp.MaximumRetryCount = n
	}
	return rp
}

// resources applies limits from both the top-level keys and deploy.resources.limits (the
// latter wins, as in compose).
func resources(res *container.Resources, s types.ServiceConfig) error {
	res.Memory, res.MemoryReservation = int64(s.MemLimit), int64(s.MemReservation)
	res.MemorySwap = int64(s.MemSwapLimit)
	if s.MemSwappiness != 0 {
		v := int64(s.MemSwappiness)
		res.MemorySwappiness = &v
	}
	res.NanoCPUs = int64(float64(s.CPUS) * 1e9)
	res.CPUShares, res.CPUPeriod, res.CPUQuota = s.CPUShares, s.CPUPeriod, s.CPUQuota
	res.CPURealtimePeriod, res.CPURealtimeRuntime, res.CpusetCpus = s.CPURTPeriod, s.CPURTRuntime, s.CPUSet
	res.CgroupParent = s.CgroupParent
	if s.PidsLimit != 0 {
		v := s.PidsLimit
		res.PidsLimit = &v
	}
	if s.OomKillDisable {
		v := true
		res.OomKillDisable = &v
	}
	if s.BlkioConfig != nil {
		return unsupported(s.Name, "blkio_config", "")
	}
	if s.Deploy != nil && s.Deploy.Resources.Limits != nil {
		l := s.Deploy.Resources.Limits
		if l.MemoryBytes > 0 {
			res.Memory = int64(l.MemoryBytes)
		}
		if l.NanoCPUs > 0 {
			res.NanoCPUs = int64(float64(l.NanoCPUs) * 1e9)
		}
		if l.Pids > 0 {
			v := l.Pids
			res.PidsLimit = &v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Ulimits)) {
		u := s.Ulimits[name]
		soft, hard := int64(u.Soft), int64(u.Hard)
		if u.Single != 0 {
			soft, hard = int64(u.Single), int64(u.Single)
		}
		res.Ulimits = append(res.Ulimits, &units.Ulimit{Name: name, Soft: soft, Hard: hard})
	}
	return nil
}

// namespaceMode resolves ipc/pid/uts values; "service:X" becomes "container:<X's ID>".
func namespaceMode[M ~string](service, key, v string, r refs) (M, error) {
	if target, ok := strings.CutPrefix(v, types.ServicePrefix); ok {
		id, err := r.containers(target)
		if err != nil {
			return "", fmt.Errorf("services.%s.%s: %w", service, key, err)
		}
		return M("container:" + id), nil
	}
	return M(v), nil
}

// mounts turns volumes, secrets and configs into binds and mounts. Host binds go through Binds
// so the engine creates a missing host path the way compose does.
func mounts(host *container.HostConfig, s types.ServiceConfig, r refs) error {
	for _, v := range s.Volumes {
		switch v.Type {
		case types.VolumeTypeBind:
			opts := []string{"rw"}
			if v.ReadOnly {
				opts[0] = "ro"
			}
			if v.Bind != nil && v.Bind.SELinux != "" {
				opts = append(opts, v.Bind.SELinux)
			}
			if v.Bind != nil && v.Bind.Propagation != "" {
				opts = append(opts, v.Bind.Propagation)
			}
			host.Binds = append(host.Binds, v.Source+":"+v.Target+":"+strings.Join(opts, ","))
		case types.VolumeTypeVolume:
			m := mount.Mount{Type: mount.TypeVolume, Target: v.Target, ReadOnly: v.ReadOnly, Source: v.Source}
			if v.Source != "" {
				name, ok := r.volumes[v.Source]
				if !ok {
					return fmt.Errorf("services.%s.volumes: volume %q is not defined", s.Name, v.Source)
				}
				m.Source = name
			}
			if v.Volume != nil {
				m.VolumeOptions = &mount.VolumeOptions{NoCopy: v.Volume.NoCopy, Subpath: v.Volume.Subpath}
			}
			host.Mounts = append(host.Mounts, m)
		case types.VolumeTypeTmpfs:
			m := mount.Mount{Type: mount.TypeTmpfs, Target: v.Target, ReadOnly: v.ReadOnly}
			if v.Tmpfs != nil {
				m.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: int64(v.Tmpfs.Size), Mode: os.FileMode(v.Tmpfs.Mode)}
			}
			host.Mounts = append(host.Mounts, m)
		}
	}
	for _, sec := range s.Secrets {
		def, ok := r.secrets[sec.Source]
		if err := fileBind(host, s.Name, "secret", sec.Source, sec.Target, "/run/secrets/", types.FileObjectConfig(def), ok); err != nil {
			return err
		}
	}
	for _, c := range s.Configs {
		def, ok := r.configs[c.Source]
		if err := fileBind(host, s.Name, "config", c.Source, c.Target, "/", types.FileObjectConfig(def), ok); err != nil {
			return err
		}
	}
	return nil
}

// fileBind mounts a file secret or config read-only at its target (relative targets go under
// dir, as compose does); secrets and configs from the environment or inline content are not
// mounted.
func fileBind(host *container.HostConfig, service, kind, source, target, dir string, def types.FileObjectConfig, defined bool) error {
	if !defined || def.File == "" || bool(def.External) {
		return unsupported(service, kind+"s", fmt.Sprintf("%s %q is not a file (only file %ss are mounted)", kind, source, kind))
	}
	if target == "" {
		target = source
	}
	if !strings.HasPrefix(target, "/") {
		target = dir + target
	}
	host.Binds = append(host.Binds, def.File+":"+target+":ro")
	return nil
}

// networking sets the network mode and endpoints. Networks are joined in priority order (then
// by name); the first at create time, the rest by NetworkConnect before start, because API
// 1.41 engines accept a single endpoint at create.
func networking(spec *createSpec, s types.ServiceConfig, r refs) error {
	mode := s.NetworkMode
	if mode == "" && s.Net != "" {
		mode = s.Net
	}
	switch {
	case mode == "":
	case strings.HasPrefix(mode, types.ServicePrefix):
		id, err := r.containers(strings.TrimPrefix(mode, types.ServicePrefix))
		if err != nil {
			return fmt.Errorf("services.%s.network_mode: %w", s.Name, err)
		}
		spec.host.NetworkMode = container.NetworkMode("container:" + id)
		return nil
	default: // bridge, host, none, default, container:<name>
		spec.host.NetworkMode = container.NetworkMode(mode)
		return nil
	}
	keys := slices.Sorted(maps.Keys(s.Networks))
	sort.SliceStable(keys, func(i, j int) bool {
		pi, pj := priority(s.Networks[keys[i]]), priority(s.Networks[keys[j]])
		if pi != pj {
			return pi > pj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		engineName, ok := r.networks[k]
		if !ok {
			return fmt.Errorf("services.%s.networks: network %q is not defined", s.Name, k)
		}
		ep := &network.EndpointSettings{Aliases: []string{s.Name}}
		if c := s.Networks[k]; c != nil {
			ep.Aliases = append(ep.Aliases, c.Aliases...)
			ep.DriverOpts = c.DriverOpts
			if c.Ipv4Address != "" || c.Ipv6Address != "" {
				ep.IPAMConfig = &network.EndpointIPAMConfig{}
				if a, err := netip.ParseAddr(c.Ipv4Address); err == nil {
					ep.IPAMConfig.IPv4Address = a
				}
				if a, err := netip.ParseAddr(c.Ipv6Address); err == nil {
					ep.IPAMConfig.IPv6Address = a
				}
			}
		}
		spec.endpoint[engineName] = ep
		if spec.primary == "" {
			spec.primary = engineName
			spec.host.NetworkMode = container.NetworkMode(engineName)
		}
	}
	if spec.primary == "" {
		spec.host.NetworkMode = "none"
	}
	return nil
}

func priority(c *types.ServiceNetworkConfig) int {
	if c == nil {
		return 0
	}
	return c.Priority
}

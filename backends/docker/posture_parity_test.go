package docker

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	composeloader "github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/spec"
)

// sharedRules are the rules both the linter and live posture decide (live posture cannot see
// roles, profiles or Dockerfiles; lint cannot see the engine's defaults).
var sharedRules = map[string]bool{}

func init() {
	for _, id := range strings.Fields(`CMP-H01 CMP-H02 CMP-H04 CMP-H05 CMP-H06 CMP-H07 CMP-H08 CMP-H09 CMP-H10
		CMP-H11 CMP-H12 CMP-H13 CMP-H14 CMP-H16 CMP-H17 CMP-H18 CMP-H19 CMP-H20 CMP-H21 CMP-H22 CMP-H23
		CMP-H24 CMP-H25 CMP-H26 CMP-H28 CMP-H29 CMP-R01 CMP-R02 CMP-R03 CMP-R04 CMP-R07 CMP-N01 CMP-N03
		CMP-N07 CMP-N08 CMP-N09 CMP-T01 CMP-T04`) {
		sharedRules[id] = true
	}
}

// TestLintAndLivePostureAgree: for each hazard, a Compose fixture is linted and also
// created on the real engine the way Compose would (compose-go's typed project → container
// create); lint and live posture must report the same rule IDs, with the hazard's among them.
func TestLintAndLivePostureAgree(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := b.Client()
	img := dockertest.Image(t)
	ctx := context.Background()
	facts, err := b.EngineFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	base := `    image: ` + img + `
    user: "1000:1000"
    read_only: true
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true"]
    mem_limit: 64m
    memswap_limit: 64m
    cpus: 0.5
    pids_limit: 64
    networks: [inner]
`
	hazards := []struct {
		name, rule, svc string // svc replaces/extends the base lines
		nets            string
	}{
		{"hardened", "", "", ""},
		{"privileged", "CMP-H01", "    privileged: true\n", ""},
		{"engine socket", "CMP-H02", "    volumes: [\"/var/run/docker.sock:/var/run/docker.sock:ro\"]\n", ""},
		{"host /etc", "CMP-H04", "    volumes: [\"/etc:/host-etc:ro\"]\n", ""},
		{"data bind", "CMP-H05", "    volumes: [\"" + dataDir + ":/data\"]\n", ""},
		{"sys_admin", "CMP-H06", "    cap_add: [SYS_ADMIN]\n", ""},
		{"net_raw back", "CMP-H09", "    cap_add: [NET_RAW]\n", ""},
		{"seccomp", "CMP-H10", "    security_opt: [\"no-new-privileges:true\", \"seccomp=unconfined\"]\n", ""},
		{"apparmor", "CMP-H11", "    security_opt: [\"no-new-privileges:true\", \"apparmor=unconfined\"]\n", ""},
		{"selinux off", "CMP-H12", "    security_opt: [\"no-new-privileges:true\", \"label=disable\"]\n", ""},
		{"no nnp", "CMP-H13", "    security_opt: []\n", ""},
		{"systempaths", "CMP-H14", "    security_opt: [\"no-new-privileges:true\", \"systempaths=unconfined\"]\n", ""},
		{"pid host", "CMP-H16", "    pid: host\n", ""},
		{"ipc host", "CMP-H17", "    ipc: host\n", ""},
		{"uts host", "CMP-H18", "    uts: host\n", ""},
		{"userns host", "CMP-H19", "    userns_mode: host\n", ""},
		{"cgroup host", "CMP-H20", "    cgroup: host\n", ""},
		{"device", "CMP-H21", "    devices: [\"/dev/ptmx:/dev/xptmx\"]\n", ""},
		{"harmless device", "", "    devices: [\"/dev/null:/dev/xnull\"]\n    volumes: [\"/dev/null:/etc/machine-id:ro\"]\n", ""},
		{"all devices rule", "CMP-H21", "    device_cgroup_rules: [\"c *:* rwm\"]\n", ""},
		{"route_localnet", "CMP-H23", "    sysctls: [\"net.ipv4.conf.all.route_localnet=1\"]\n", ""},
		{"unsafe sysctl", "CMP-H23", "    sysctls: {net.core.somaxconn: 1024}\n", ""},
		{"writable root", "CMP-H24", "    read_only: false\n", ""},
		{"root user", "CMP-H25", "    user: \"0\"\n", ""},
		{"runc runtime", "CMP-H26", "    runtime: runc\n", ""},
		{"oom score", "CMP-H28", "    oom_score_adj: -500\n", ""},
		{"proc workdir", "CMP-H29", "    working_dir: /proc/self/fd/7\n", ""},
		{"no memory limit", "CMP-R01", "    mem_limit: 0\n    memswap_limit: 0\n", ""},
		{"swap", "CMP-R04", "    memswap_limit: -1\n", ""},
		{"no cpu limit", "CMP-R02", "    cpus: 0\n", ""},
		{"no pids limit", "CMP-R03", "    pids_limit: -1\n", ""},
		{"restart always", "CMP-R07", "    restart: always\n", ""},
		{"host network", "CMP-N01", "    network_mode: host\n", ""},
		{"default bridge", "CMP-N03", "    network_mode: bridge\n", ""},
		{"non-internal network", "CMP-N03", "    networks: [outer]\n", "  outer: {}\n"},
		{"public dns", "CMP-N07", "    dns: [8.8.8.8]\n", ""},
		{"host gateway", "CMP-N08", "    extra_hosts: [\"host.docker.internal:host-gateway\"]\n", ""},
		{"published port", "CMP-N09", "    ports: [\"127.0.0.1:8080:80\", \"0.0.0.0:18080:80\"]\n", ""},
		{"credential", "CMP-T01", "    environment: [\"OPENAI_API_KEY=sk-parity-DUMMY-000000000000000000000\", \"DB_PASSWORD=x\"]\n", ""},
		{"credential passthrough", "CMP-T01", "    environment: [ANTHROPIC_API_KEY]\n", ""},
	}
	dir := t.TempDir()
	for i, h := range hazards {
		t.Run(h.name, func(t *testing.T) {
			project := fmt.Sprintf("rk-parity-%d-%s", i, dockertest.RunID)
			src := "services:\n  default:\n" + merge(base, h.svc) + "networks:\n  inner: {internal: true}\n" + h.nets
			file := filepath.Join(dir, fmt.Sprintf("compose-%d.yaml", i))
			if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("ANTHROPIC_API_KEY", "sk-ant-parity-DUMMY-00000000000000000000") // the harness's key, passed through
			res, err := spec.LintFile(file, spec.Options{EngineRuntimes: facts.Runtimes, EngineDefaultCgroupns: facts.DefaultCgroupns(), Env: map[string]string{"ANTHROPIC_API_KEY": os.Getenv("ANTHROPIC_API_KEY")}})
			if err != nil {
				t.Fatal(err)
			}
			lint := ruleIDs(res.Findings, func(f spec.Finding) string { return f.RuleID })
			createFromCompose(t, cli, project, file, img)
			live := ruleIDs(b.posture(ctx, project+"-default-1", "default"), func(f backends.Finding) string { return f.RuleID })
			if h.rule != "" && (!lint[h.rule] || !live[h.rule]) {
				t.Errorf("hazard rule %s: lint %v live %v", h.rule, lint[h.rule], live[h.rule])
			}
			if l, v := keys(lint), keys(live); strings.Join(l, " ") != strings.Join(v, " ") {
				t.Errorf("lint and live posture differ\n lint %v\n live %v\n%s", l, v, src)
			}
		})
	}
}

// merge overrides base's keys with the hazard's lines (one key per line at four spaces).
func merge(base, over string) string {
	keyOf := func(l string) string { k, _, _ := strings.Cut(strings.TrimSpace(l), ":"); return k }
	overKeys := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(over, "\n"), "\n") {
		if l != "" {
			overKeys[keyOf(l)] = true
		}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(base, "\n"), "\n") {
		k := keyOf(l)
		if overKeys[k] || (k == "networks" && (overKeys["network_mode"])) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n" + over
}

func ruleIDs[F any](fs []F, id func(F) string) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if r := id(f); sharedRules[r] {
			out[r] = true
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// createFromCompose creates (does not start) the project's default service the way Compose
// does: compose-go's typed model translated to the Engine API, networks included.
func createFromCompose(t *testing.T, cli *client.Client, project, file, img string) {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": os.Getenv("ANTHROPIC_API_KEY")}
	proj, err := composeloader.LoadWithContext(ctx, types.ConfigDetails{WorkingDir: filepath.Dir(file),
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: data}}, Environment: env},
		func(o *composeloader.Options) { o.SetProjectName(project, true) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dockertest.RemoveProject(cli, project) })
	netNames := map[string]string{}
	for key, n := range proj.Networks {
		name := project + "_" + key
		if _, err := cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Internal: n.Internal,
			Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelNetwork: key})}); err != nil {
			t.Fatal(err)
		}
		netNames[key] = name
	}
	s := proj.Services["default"]
	cfg := &container.Config{Image: img, User: s.User, WorkingDir: s.WorkingDir, Cmd: []string{"sleep", "3600"},
		Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelService: "default", LabelNumber: "1", LabelOneoff: "False"})}
	for _, k := range sortedEnv(s.Environment) {
		if v := s.Environment[k]; v != nil {
			cfg.Env = append(cfg.Env, k+"="+*v)
		}
	}
	hc := &container.HostConfig{Privileged: s.Privileged, CapAdd: s.CapAdd, CapDrop: s.CapDrop, ReadonlyRootfs: s.ReadOnly,
		PidMode: container.PidMode(s.Pid), IpcMode: container.IpcMode(s.Ipc), UTSMode: container.UTSMode(s.Uts),
		UsernsMode: container.UsernsMode(s.UserNSMode), CgroupnsMode: container.CgroupnsMode(s.Cgroup),
		OomScoreAdj: int(s.OomScoreAdj), Sysctls: map[string]string(s.Sysctls), Runtime: s.Runtime,
		ExtraHosts: s.ExtraHosts.AsList(":"), RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyMode(s.Restart)}}
	if s.OomKillDisable {
		hc.OomKillDisable = &s.OomKillDisable
	}
	// Compose turns systempaths=unconfined into empty masked and read-only path lists.
	for _, o := range s.SecurityOpt {
		if strings.ReplaceAll(o, ":", "=") == "systempaths=unconfined" {
			hc.MaskedPaths, hc.ReadonlyPaths = []string{}, []string{}
			continue
		}
		hc.SecurityOpt = append(hc.SecurityOpt, o)
	}
	hc.Memory, hc.MemorySwap = int64(s.MemLimit), int64(s.MemSwapLimit)
	hc.NanoCPUs = int64(s.CPUS * 1e9)
	if s.PidsLimit != 0 {
		hc.PidsLimit = &s.PidsLimit
	}
	hc.DeviceCgroupRules, hc.CgroupParent = s.DeviceCgroupRules, s.CgroupParent
	for _, d := range s.Devices {
		hc.Devices = append(hc.Devices, container.DeviceMapping{PathOnHost: d.Source, PathInContainer: d.Target, CgroupPermissions: "rwm"})
	}
	for _, d := range s.DNS {
		if a, err := netip.ParseAddr(d); err == nil {
			hc.DNS = append(hc.DNS, a)
		}
	}
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind {
			bind := v.Source + ":" + v.Target
			if v.ReadOnly {
				bind += ":ro"
			}
			hc.Binds = append(hc.Binds, bind)
		}
	}
	if len(s.Ports) > 0 {
		hc.PortBindings = network.PortMap{}
		for _, p := range s.Ports {
			port := network.MustParsePort(strconv.Itoa(int(p.Target)) + "/" + p.Protocol)
			pb := network.PortBinding{HostPort: p.Published}
			if a, err := netip.ParseAddr(p.HostIP); err == nil {
				pb.HostIP = a
			}
			hc.PortBindings[port] = append(hc.PortBindings[port], pb)
		}
	}
	var nc *network.NetworkingConfig
	switch {
	case s.NetworkMode != "":
		hc.NetworkMode = container.NetworkMode(s.NetworkMode)
	default:
		for key := range s.Networks {
			hc.NetworkMode = container.NetworkMode(netNames[key])
			nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{netNames[key]: {}}}
			break
		}
	}
	if _, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: project + "-default-1", Config: cfg, HostConfig: hc, NetworkingConfig: nc}); err != nil {
		t.Fatalf("create from %s: %v", file, err)
	}
}

func sortedEnv(m types.MappingWithEquals) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package demos

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockerfile"
)

// LabelDemo marks every resource the demo creates, so --down removes exactly those. Its value is
// the demo instance ("1" for the operator's demo range).
const LabelDemo = "dev.rangekeeper.demo"

// Image is the operator's demo image tag; other instances tag "rangekeeper-demo/agent:<instance>".
const Image = "rangekeeper-demo/agent:local"

// defaultInstance is the label value of the operator's demo range (`rangekeeper demo`).
const defaultInstance = "1"

// Range is the demo's compose projects, with Inspect-style names (task + "-i" + 6+ chars).
var Range = []Project{
	{Name: "inspect-ctf_web-ihard01", Hardened: true},
	{Name: "inspect-pwn_kernel-iweak02", Weak: true},
	{Name: "inspect-recon-iscor03", ScorerShared: true},
}

// Project is one demo sandbox.
type Project struct {
	Name         string
	Hardened     bool // internal network, cap_drop ALL, no-new-privileges, read-only, non-root, limits
	Weak         bool // project bridge with egress, default caps, root, no limits
	ScorerShared bool // a scorer service on the agent's network (the agent can reach it)
}

// Options for Up.
type Options struct {
	Agent   []byte            // static demo agent binary (required)
	Busybox []byte            // optional static busybox, so operators can exec a shell
	Labels  map[string]string // extra labels on every resource (tests add their own)
	// Instance separates demo ranges on one engine: "" is the operator's demo range; tests pass
	// their run ID (lower-case letters and digits), so their projects, image and labels never
	// touch a demo range an operator has running.
	Instance string
}

func (o Options) instance() string {
	if o.Instance == "" {
		return defaultInstance
	}
	return o.Instance
}

// Projects returns the instance's projects: the operator's demo uses Range's names; another
// instance appends "t<instance>" to each (keeping Inspect's name pattern).
func (o Options) Projects() []Project {
	out := append([]Project(nil), Range...)
	if o.Instance != "" {
		for i := range out {
			out[i].Name += "t" + o.Instance
		}
	}
	return out
}

// image is the instance's image tag.
func (o Options) image() string {
	if o.Instance == "" {
		return Image
	}
	return "rangekeeper-demo/agent:t" + o.Instance
}

// FindAgent looks for the demo agent binary next to the running executable, then in ./bin.
func FindAgent() (string, error) {
	var tried []string
	if exe, err := os.Executable(); err == nil {
		tried = append(tried, filepath.Join(filepath.Dir(exe), "rangekeeper-demo-agent"))
	}
	tried = append(tried, filepath.Join("bin", "rangekeeper-demo-agent"))
	for _, p := range tried {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("demo agent binary not found (looked at %s); run `make build` first", strings.Join(tried, ", "))
}

func (o Options) labels(extra map[string]string) map[string]string {
	l := map[string]string{LabelDemo: o.instance()}
	for k, v := range o.Labels {
		l[k] = v
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// Up builds the image and starts every project; it is idempotent (existing demo resources are
// removed first).
func Up(ctx context.Context, cli *client.Client, opts Options) error {
	if len(opts.Agent) == 0 {
		return errors.New("demo: no agent binary")
	}
	if err := DownInstance(ctx, cli, opts.Instance); err != nil {
		return err
	}
	if err := buildImage(ctx, cli, opts); err != nil {
		return fmt.Errorf("demo: build image: %w", err)
	}
	for _, p := range opts.Projects() {
		if err := startProject(ctx, cli, p, opts); err != nil {
			return fmt.Errorf("demo: %s: %w", p.Name, err)
		}
	}
	return nil
}

func buildImage(ctx context.Context, cli *client.Client, opts Options) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte, mode int64) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	df := "FROM scratch\nCOPY agent /bin/agent\n"
	if len(opts.Busybox) > 0 {
		if err := add("busybox", opts.Busybox, 0o755); err != nil {
			return err
		}
		df += "COPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n" +
			"RUN [\"/bin/busybox\", \"mkdir\", \"-p\", \"/tmp\", \"/data\", \"/etc\"]\nRUN [\"/bin/busybox\", \"chmod\", \"1777\", \"/tmp\"]\n"
	}
	df += "CMD [\"/bin/agent\"]\n" + dockerfile.Label(opts.labels(nil))
	if err := add("agent", opts.Agent, 0o755); err != nil {
		return err
	}
	if err := add("Dockerfile", []byte(df), 0o644); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{opts.image()}, Remove: true, ForceRemove: true})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if bytes.Contains(out, []byte(`"errorDetail"`)) {
		return fmt.Errorf("%s", out)
	}
	return nil
}

func composeLabels(project, service string, extra map[string]string) map[string]string {
	l := map[string]string{
		"com.docker.compose.project":              project,
		"com.docker.compose.service":              service,
		"com.docker.compose.container-number":     "1",
		"com.docker.compose.oneoff":               "False",
		"com.docker.compose.project.config_files": "demos/specs/" + project + ".yaml",
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func startProject(ctx context.Context, cli *client.Client, p Project, opts Options) error {
	netName := p.Name + "_default"
	if _, err := cli.NetworkCreate(ctx, netName, client.NetworkCreateOptions{Driver: "bridge", Internal: p.Hardened,
		Labels: opts.labels(map[string]string{"com.docker.compose.project": p.Name, "com.docker.compose.network": "default"})}); err != nil {
		return err
	}
	agentHC := &container.HostConfig{NetworkMode: container.NetworkMode(netName)}
	user := ""
	if p.Hardened {
		pids := int64(128)
		agentHC.CapDrop = []string{"ALL"}
		agentHC.SecurityOpt = []string{"no-new-privileges:true"}
		agentHC.ReadonlyRootfs = true
		agentHC.Tmpfs = map[string]string{"/tmp": "size=16m"}
		agentHC.Resources = container.Resources{Memory: 128 << 20, NanoCPUs: 500_000_000, PidsLimit: &pids}
		user = "65534:65534"
	}
	if err := run(ctx, cli, p.Name, "default", netName, agentHC, user, nil, opts); err != nil {
		return err
	}
	if p.Hardened {
		// A victim service the agent may attack, on the same internal network.
		return run(ctx, cli, p.Name, "victim", netName, &container.HostConfig{NetworkMode: container.NetworkMode(netName),
			CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges:true"}, ReadonlyRootfs: true,
			Resources: container.Resources{Memory: 64 << 20}}, "65534:65534", []string{"/bin/agent", "serve", ":8080"}, opts)
	}
	if p.ScorerShared {
		return run(ctx, cli, p.Name, "scorer", netName, &container.HostConfig{NetworkMode: container.NetworkMode(netName)},
			"", []string{"/bin/agent", "serve", ":9000"}, opts)
	}
	return nil
}

func run(ctx context.Context, cli *client.Client, project, service, netName string, hc *container.HostConfig, user string, cmd []string, opts Options) error {
	name := fmt.Sprintf("%s-%s-1", project, service)
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       name,
		Config:     &container.Config{Image: opts.image(), Cmd: cmd, User: user, Labels: opts.labels(composeLabels(project, service, nil)), StopSignal: "SIGTERM"},
		HostConfig: hc,
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			netName: {Aliases: []string{service}},
		}},
	})
	if err != nil {
		return err
	}
	_, err = cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{})
	return err
}

// Down removes the operator's demo range: every container, network, volume and image labelled as
// its own. Demo ranges of other instances (tests) are left alone.
func Down(ctx context.Context, cli *client.Client) error { return DownInstance(ctx, cli, "") }

// DownInstance removes one instance's demo range ("" is the operator's).
func DownInstance(ctx context.Context, cli *client.Client, instance string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	opts := Options{Instance: instance}
	f := make(client.Filters).Add("label", LabelDemo+"="+opts.instance())
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("demo: list containers: %w", err)
	}
	for _, c := range cs.Items {
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, err)
		}
	}
	if ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f}); err == nil {
		for _, v := range vs.Items {
			if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// Snapshot images taken of demo sandboxes carry the project label too.
	for _, lf := range []client.Filters{f, make(client.Filters).Add("label", "dev.rangekeeper.snapshot")} {
		is, err := cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: lf})
		if err != nil {
			continue
		}
		for _, i := range is.Items {
			if lf["label"]["dev.rangekeeper.snapshot"] && !opts.ownsImage(i.Labels) {
				continue
			}
			if _, err := cli.ImageRemove(ctx, i.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil && !strings.Contains(err.Error(), "No such image") {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ownsImage reports whether an image belongs to this instance: its label, or a snapshot image
// of one of its projects.
func (o Options) ownsImage(labels map[string]string) bool {
	if labels[LabelDemo] == o.instance() {
		return true
	}
	for _, p := range o.Projects() {
		if labels["com.docker.compose.project"] == p.Name {
			return true
		}
	}
	return false
}

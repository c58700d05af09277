// Package dockertest gives tests a real Docker Engine, a locally built busybox image (no
// registry) and compose-labelled projects, all labelled dev.rangekeeper.test=1 and removed at the
// end of the test, also on failure. With CI=true a missing engine fails the test instead of
// skipping it.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockerfile"
)

// LabelTest marks every resource a test creates; LabelRun ties it to one test process, and
// LabelOwner names that process ("<pid>:<start time>", as /proc tells), so a later test process
// can tell a dead run's leftovers from a live run's resources.
const (
	LabelTest  = "dev.rangekeeper.test"
	LabelRun   = "dev.rangekeeper.test.run"
	LabelOwner = "dev.rangekeeper.test.owner"
)

// RunID identifies this test process's resources.
var RunID = func() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// Labels returns the test labels merged with extra.
func Labels(extra map[string]string) map[string]string {
	l := map[string]string{LabelTest: "1", LabelRun: RunID, LabelOwner: owner}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

var (
	engineOnce sync.Once
	engine     *client.Client
	engineErr  error
)

// Engine returns a client for the local engine. Without one the test is skipped, unless
// CI=true, where it fails: CI must never pass by not testing.
func Engine(t testing.TB) *client.Client {
	t.Helper()
	engineOnce.Do(func() {
		engine, engineErr = client.New(client.FromEnv) // API-version negotiation is the default
		if engineErr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, engineErr = engine.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
		}
	})
	if engineErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("docker engine required in CI: %v", engineErr)
		}
		t.Skipf("no docker engine: %v", engineErr)
	}
	return engine
}

var (
	imageOnce sync.Once
	imageRef  string
	imageErr  error
)

// ImageRepo is an image repository of this test process alone, for images a product builds
// under a repository it is told (e.g. verify's canary image): no other test process finds it.
func ImageRepo(name string) string { return "rangekeeper-test/" + name + "-" + RunID }

// BusyboxPath is where Debian's busybox-static installs its binary.
const BusyboxPath = "/bin/busybox"

// Image returns a local image holding a static busybox with its applets installed under /bin.
// It is built once per test process through the Engine API and removed by Sweep.
func Image(t testing.TB) string {
	t.Helper()
	cli := Engine(t)
	imageOnce.Do(func() {
		imageRef = "rangekeeper-test/busybox:" + RunID
		imageErr = BuildImage(context.Background(), cli, imageRef, Labels(nil), map[string][]byte{}, []string{BusyboxPath})
	})
	if imageErr != nil {
		t.Fatalf("build test image: %v", imageErr)
	}
	return imageRef
}

// BuildImage builds tag FROM scratch with busybox (if listed in hostFiles by path) and extra
// files, through the Engine API. hostFiles are copied from this machine to /bin/<base>.
func BuildImage(ctx context.Context, cli *client.Client, tag string, labels map[string]string, files map[string][]byte, hostFiles []string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	recipe := "FROM scratch\n"
	add := func(name string, data []byte, mode int64) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	hasBusybox := false
	for _, p := range hostFiles {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("%s: %w (install Debian's busybox-static)", p, err)
		}
		base := p[strings.LastIndex(p, "/")+1:]
		if err := add(base, data, 0o755); err != nil {
			return err
		}
		recipe += fmt.Sprintf("COPY %s /bin/%s\n", base, base)
		if base == "busybox" {
			hasBusybox = true
		}
	}
	for name, data := range files {
		if err := add(strings.TrimPrefix(name, "/"), data, 0o755); err != nil {
			return err
		}
		recipe += fmt.Sprintf("COPY %s %s\n", strings.TrimPrefix(name, "/"), name)
	}
	if hasBusybox {
		recipe += `RUN ["/bin/busybox", "--install", "-s", "/bin"]` + "\n" +
			`RUN ["/bin/busybox", "mkdir", "-p", "/tmp", "/etc", "/root"]` + "\n" +
			`RUN ["/bin/busybox", "chmod", "1777", "/tmp"]` + "\n"
	}
	recipe += dockerfile.Label(labels)
	if err := add("Dockerfile", []byte(recipe), 0o644); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if bytes.Contains(out, []byte(`"errorDetail"`)) {
		return fmt.Errorf("image build failed: %s", out)
	}
	return nil
}

// Service is one member of a test project.
type Service struct {
	Name       string
	Cmd        []string // default: sleep forever
	Labels     map[string]string
	HostConfig *container.HostConfig // nil: defaults plus the project network
	Networks   []string              // extra (already created) networks to join, by name
	Env        []string
	User       string
	DependsOn  string // value of com.docker.compose.depends_on
}

// Project creates and starts a compose-labelled project: a labelled network
// "<project>_default" and one container per service named "<project>-<service>-1".
// Everything is removed when the test ends.
func Project(t testing.TB, project string, services ...Service) {
	t.Helper()
	cli := Engine(t)
	img := Image(t)
	ctx := context.Background()
	netName := project + "_default"
	if _, err := cli.NetworkCreate(ctx, netName, client.NetworkCreateOptions{Driver: "bridge", Labels: Labels(map[string]string{
		"com.docker.compose.project": project, "com.docker.compose.network": "default",
	})}); err != nil {
		t.Fatalf("create network %s: %v", netName, err)
	}
	t.Cleanup(func() { RemoveProject(cli, project) })
	for _, s := range services {
		StartService(t, project, netName, img, s)
	}
}

// StartService creates and starts one compose-labelled container in project.
func StartService(t testing.TB, project, netName, img string, s Service) string {
	t.Helper()
	cli := Engine(t)
	ctx := context.Background()
	cmd := s.Cmd
	if cmd == nil {
		cmd = []string{"sleep", "3600"}
	}
	labels := Labels(map[string]string{
		"com.docker.compose.project":          project,
		"com.docker.compose.service":          s.Name,
		"com.docker.compose.container-number": "1",
		"com.docker.compose.oneoff":           "False",
		"com.docker.compose.depends_on":       s.DependsOn,
	})
	for k, v := range s.Labels {
		labels[k] = v
	}
	hc := s.HostConfig
	if hc == nil {
		hc = &container.HostConfig{}
	}
	if hc.NetworkMode == "" {
		hc.NetworkMode = container.NetworkMode(netName)
	}
	var nc *network.NetworkingConfig
	if netName != "" && string(hc.NetworkMode) == netName {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			netName: {Aliases: []string{s.Name}},
		}}
	}
	name := fmt.Sprintf("%s-%s-1", project, s.Name)
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:             name,
		Config:           &container.Config{Image: img, Cmd: cmd, Labels: labels, Env: s.Env, User: s.User, StopSignal: "SIGKILL"},
		HostConfig:       hc,
		NetworkingConfig: nc,
	})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	})
	for _, n := range s.Networks {
		if _, err := cli.NetworkConnect(ctx, n, client.NetworkConnectOptions{Container: res.ID, EndpointConfig: &network.EndpointSettings{Aliases: []string{s.Name}}}); err != nil {
			t.Fatalf("connect %s to %s: %v", name, n, err)
		}
	}
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return res.ID
}

// RemoveProject force-removes a project's containers, networks and volumes (by compose label).
func RemoveProject(cli *client.Client, project string) {
	removeLabelled(cli, "com.docker.compose.project="+project, false)
}

// removeLabelled removes containers, networks and volumes (and images, when asked) carrying label.
func removeLabelled(cli *client.Client, label string, images bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Listed in removal order: containers before the networks, volumes and images they use.
	for _, r := range listLabelled(ctx, cli, make(client.Filters).Add("label", label), images) {
		switch r.kind {
		case "container":
			_, _ = cli.ContainerRemove(ctx, r.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		case "network":
			_, _ = cli.NetworkRemove(ctx, r.id, client.NetworkRemoveOptions{})
		case "volume":
			_, _ = cli.VolumeRemove(ctx, r.id, client.VolumeRemoveOptions{Force: true})
		case "image":
			_, _ = cli.ImageRemove(ctx, r.id, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		}
	}
}

// labelled is one engine object a filter matched: its kind, what the engine removes it by
// (ID, or a volume's name) and its labels.
type labelled struct {
	kind, id string
	labels   map[string]string
}

// listLabelled lists the containers, networks, volumes and (with images) images f matches, in
// that order; a kind the engine fails to list is left out.
func listLabelled(ctx context.Context, cli *client.Client, f client.Filters, images bool) []labelled {
	var out []labelled
	if cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			out = append(out, labelled{"container", c.ID, c.Labels})
		}
	}
	if ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			out = append(out, labelled{"network", n.ID, n.Labels})
		}
	}
	if vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f}); err == nil {
		for _, v := range vs.Items {
			out = append(out, labelled{"volume", v.Name, v.Labels})
		}
	}
	if images {
		if is, err := cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: f}); err == nil {
			for _, i := range is.Items {
				out = append(out, labelled{"image", i.ID, i.Labels})
			}
		}
	}
	return out
}

// Main runs the tests and then sweeps every resource this process labelled, so nothing is left
// behind even when a test panicked past its cleanups; after runs then (e.g. removing files the
// package's tests shared). Use it from TestMain.
//
// It first sweeps what dead test processes left: a test binary killed by its timeout or a
// signal never reaches its own sweep.
func Main(m *testing.M, after ...func()) {
	SweepDead()
	code := m.Run()
	Sweep(RunID)
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// Sweep removes containers, networks, volumes and images labelled with run id.
func Sweep(run string) {
	cli, err := client.New(client.FromEnv) // API-version negotiation is the default
	if err != nil {
		return
	}
	defer cli.Close()
	removeLabelled(cli, LabelRun+"="+run, true)
	// Prune only this run's dangling images: another test process may be mid-build, and its
	// freshly built image is untagged (dangling) until the engine tags it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = cli.ImagePrune(ctx, client.ImagePruneOptions{Filters: make(client.Filters).Add("dangling", "true").Add("label", LabelRun+"="+run)})
}

// HaveComposeCLI reports the compose CLI available here ("docker compose" or "docker-compose"),
// or nil.
func HaveComposeCLI() []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	return nil
}

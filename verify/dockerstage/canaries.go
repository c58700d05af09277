package dockerstage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockerfile"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// imageMu serialises canary image builds within one process (parallel runs share the image).
var imageMu sync.Mutex

// canaryImage returns the tag of an image holding only the canary binary, building it through
// the Engine API when the engine does not have it yet. It is cached across runs by the binary's
// hash: it is 3 MB, FROM scratch, and needs no registry.
func (d *Driver) canaryImage(ctx context.Context) (string, error) {
	bin, err := d.o.Canary()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(bin)
	hash := hex.EncodeToString(sum[:])[:12]
	repo := d.o.ImageRepo
	if repo == "" {
		repo = DefaultImageRepo
	}
	tag := repo + ":" + hash
	imageMu.Lock()
	defer imageMu.Unlock()
	if _, err := d.cli.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("inspect canary image: %w", err)
	}
	labels := map[string]string{LabelCanaryImage: hash}
	for k, v := range d.o.ImageLabels {
		labels[k] = v
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := []struct {
		name string
		data []byte
		mode int64
	}{
		{"canary", bin, 0o755},
		{"Dockerfile", []byte("FROM scratch\nCOPY canary /canary\nUSER 65534:65534\nENTRYPOINT [\"/canary\"]\n" + dockerfile.Label(labels)), 0o644},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	res, err := d.cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		return "", fmt.Errorf("build canary image: %w", err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if bytes.Contains(out, []byte(`"errorDetail"`)) {
		return "", fmt.Errorf("build canary image: %s", out)
	}
	return tag, nil
}

// canaryRun is one canary or control container.
type canaryRun struct {
	role string
	id   string
	name string
}

// startCanary creates and starts a canary container with args on host config hc.
func (s *session) startCanary(ctx context.Context, role, name string, args []string, hc *container.HostConfig, nc *network.NetworkingConfig, exposed network.PortSet) (canaryRun, error) {
	// Canaries run as nobody with no capabilities: they only listen on unprivileged ports (the
	// DNS canary's :53 is the engine's published port, mapped to 5353 inside).
	hc.CapDrop = []string{"ALL"}
	hc.SecurityOpt = append(hc.SecurityOpt, "no-new-privileges:true")
	hc.ReadonlyRootfs = true
	pids := int64(64)
	hc.PidsLimit = &pids
	hc.Memory = 64 << 20
	cfg := &container.Config{Image: s.image, Cmd: args, Labels: s.d.labels(s.req.RunID, map[string]string{LabelRole: role}), ExposedPorts: exposed}
	res, err := s.d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc, NetworkingConfig: nc})
	if err != nil {
		return canaryRun{}, fmt.Errorf("create %s: %w", name, err)
	}
	c := canaryRun{role: role, id: res.ID, name: name}
	s.addCanary(c)
	if _, err := s.d.cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		return c, fmt.Errorf("start %s: %w", name, err)
	}
	return c, nil
}

func (s *session) addCanary(c canaryRun) {
	s.mu.Lock()
	s.canaries = append(s.canaries, c)
	s.mu.Unlock()
}

// events reads a canary's log.
func (s *session) events(ctx context.Context, id string) ([]canary.Event, error) {
	rc, err := s.d.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var stdout bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, io.Discard, io.LimitReader(rc, 16<<20)); err != nil {
		return nil, err
	}
	return canary.ParseEvents(&stdout)
}

// awaitReady polls a canary's log until it reports ready, or fails when it reports an error or
// exits.
func (s *session) awaitReady(ctx context.Context, c canaryRun) error {
	for {
		ev, err := s.events(ctx, c.id)
		if err != nil {
			return fmt.Errorf("%s: read log: %w", c.name, err)
		}
		for _, e := range ev {
			switch e.Kind {
			case canary.KindReady:
				return nil
			case canary.KindError:
				return fmt.Errorf("%s: %s %s", c.name, e.Addr, e.Detail)
			}
		}
		ins, err := s.d.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
		if err == nil && ins.Container.State != nil && !ins.Container.State.Running {
			return fmt.Errorf("%s exited (code %d) before it was ready", c.name, ins.Container.State.ExitCode)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w", c.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// awaitExit waits for a one-shot control container and returns its log.
func (s *session) awaitExit(ctx context.Context, c canaryRun) ([]canary.Event, error) {
	for {
		ins, err := s.d.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if st := ins.Container.State; st != nil && !st.Running && st.Status != container.StateCreated {
			return s.events(ctx, c.id)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s did not finish: %w", c.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

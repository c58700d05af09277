package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.Reverter = (*Backend)(nil)

// labelRestore marks the short-lived, never-started containers Revert uses to write volume
// archives into volumes; a later revert or teardown of the sandbox removes leftovers.
const labelRestore = "dev.rangekeeper.restore.sandbox"

const restoreMount = "/.rangekeeper-restore"

// revertStep is called after each revert step; tests use it to cancel a revert midway.
var revertStep = func(ctx context.Context, step string) {}

// step reports a revert step to the action layer (its write-ahead record) and to tests.
func step(ctx context.Context, format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	backends.Progress(ctx, "%s", s)
	revertStep(ctx, s)
}

// revertPlan is a revert's write-ahead plan: recovering it finishes the revert from the
// snapshot record, whatever is left of the sandbox.
type revertPlan struct {
	Project    string `json:"project"`
	SnapshotID string `json:"snapshot"`
}

// revertProgress says how far a revert got, for the error of an interrupted one.
type revertProgress struct {
	removed bool
	volumes int
	created []string
	started []string
}

func (p *revertProgress) String() string {
	if !p.removed {
		return "unchanged (the previous members were not removed)"
	}
	none := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("partially restored: previous members removed, %d volume(s) restored, created: %s; started: %s",
		p.volumes, none(p.created), none(p.started))
}

// Revert implements backends.Reverter: it removes the current members, recreates networks that
// went missing, recreates the named volumes and fills them from the snapshot's archives, recreates
// every member from its snapshot image with the recorded configuration, name, labels, networks,
// aliases and static addresses, and starts the members that were running in dependency order.
// Every step is repeatable, so a revert that failed or was cancelled is finished by running it again.
func (b *Backend) Revert(ctx context.Context, sandboxID, snapshotID string, _ backends.RevertOptions) error {
	project, err := b.ProjectOf(sandboxID)
	if err != nil {
		return err
	}
	db, _, data, err := b.loadSnapshot(sandboxID, snapshotID)
	if err != nil {
		return err
	}
	if data.Project != project {
		return fmt.Errorf("snapshot %s belongs to project %s, not %s", snapshotID, data.Project, project)
	}
	for i, m := range data.Members {
		img, err := b.cli.ImageInspect(ctx, m.Image)
		if err != nil {
			if cerrdefs.IsNotFound(err) {
				return b.wrap(fmt.Errorf("revert %s to %s: snapshot image %s of %s is gone (%w); the snapshot cannot be restored", project, snapshotID, m.Image, m.Name, err))
			}
			return b.wrap(fmt.Errorf("revert %s to %s: nothing changed: %w", project, snapshotID, err))
		}
		if len(m.Env) > 0 {
			var imageEnv []string
			if img.Config != nil {
				imageEnv = img.Config.Env
			}
			env, missing := unsealEnv(data.Salt, m.Env, imageEnv)
			if len(missing) > 0 {
				return fmt.Errorf("revert %s to %s: nothing changed: %w", project, snapshotID, errMissingEnv(m.Name, missing))
			}
			cfg := *m.Config
			cfg.Env = env
			data.Members[i].Config = &cfg
		}
	}
	if err := backends.RecordPlan(ctx, revertPlan{Project: project, SnapshotID: snapshotID}); err != nil {
		return fmt.Errorf("revert %s to %s: nothing changed: %w", project, snapshotID, err)
	}
	var p revertProgress
	if err := b.revert(ctx, sandboxID, data, db.ArchiveDir(snapshotID), &p); err != nil {
		err = b.wrap(fmt.Errorf("revert %s to %s interrupted: %w; sandbox is %s; run `rangekeeper recover %s` (or the revert again) to finish it", project, snapshotID, err, &p, backends.ShortName(sandboxID)))
		if p.removed {
			err = fmt.Errorf("%w (%w)", err, backends.ErrInterrupted)
		}
		return err
	}
	step(ctx, "ready")
	return nil
}

func (b *Backend) revert(ctx context.Context, sandboxID string, data snapshotData, dir string, p *revertProgress) error {
	if err := b.removeRestoreHelpers(ctx, sandboxID); err != nil {
		return err
	}
	current, err := b.members(ctx, data.Project)
	if err != nil {
		return err
	}
	if err := parallel(len(current), func(i int) error {
		_, err := b.cli.ContainerRemove(ctx, current[i].ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("remove %s: %w", containerName(current[i]), err)
		}
		return nil
	}); err != nil {
		return err
	}
	p.removed = true
	step(ctx, "removed %d members", len(current))

	if err := b.ensureNetworks(ctx, data.Networks); err != nil {
		return err
	}
	byName := map[string]memberRecipe{}
	for _, m := range data.Members {
		byName[m.Name] = m
	}
	for _, v := range data.Volumes {
		if v.Anonymous {
			continue
		}
		if err := b.recreateVolume(ctx, v); err != nil {
			return err
		}
		if err := b.restoreVolume(ctx, sandboxID, byName[v.Member], v.Name, filepath.Join(dir, v.File)); err != nil {
			return fmt.Errorf("restore volume %s: %w", v.Name, err)
		}
		p.volumes++
		step(ctx, "restored volume %s", v.Name)
	}

	newID := map[string]string{} // old container ID and name → new ID
	for _, m := range data.Members {
		id, err := b.recreateMember(ctx, m, newID)
		if err != nil {
			return fmt.Errorf("recreate %s: %w", m.Name, err)
		}
		newID[m.OldID], newID[m.Name] = id, id
		p.created = append(p.created, m.Name)
		step(ctx, "created %s", m.Name)
	}
	for _, v := range data.Volumes {
		if !v.Anonymous {
			continue
		}
		if err := b.restoreAnonymous(ctx, sandboxID, byName[v.Member], newID[v.Member], v, dir); err != nil {
			return fmt.Errorf("restore anonymous volume at %s:%s: %w", v.Member, v.Path, err)
		}
		p.volumes++
	}
	for _, m := range data.Members {
		if !m.Running {
			continue
		}
		if _, err := b.cli.ContainerStart(ctx, newID[m.Name], client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("start %s: %w", m.Name, err)
		}
		p.started = append(p.started, m.Name)
		step(ctx, "started %s", m.Name)
	}
	return b.awaitRunningAndNamed(ctx, data.Members, newID, discoveryDeadline)
}

// discoveryDeadline bounds how long a revert waits for started members to run and for the engine
// to register their network names.
var discoveryDeadline = 30 * time.Second

// awaitRunningAndNamed waits (bounded, cancellable) until every member that was running at the
// snapshot runs again and is attached to each of its networks under every recorded alias, as the
// engine reports it. A revert that returned while a member's service name was not registered
// would leave the sandbox broken in a way nobody sees until the eval fails.
func (b *Backend) awaitRunningAndNamed(ctx context.Context, members []memberRecipe, newID map[string]string, deadline time.Duration) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	reported := false
	lastWhy := map[string]string{} // by member: the reason its last finished inspection gave
	for {
		var pending []string
		for _, m := range members {
			if !m.Running {
				continue
			}
			why, err := b.notYetNamed(ctx, m, newID[m.Name])
			switch {
			case errors.Is(err, errInspectionCut): // the last finished inspection says why
				why = cmp.Or(lastWhy[m.Name], m.Name+" not inspected yet")
			case err != nil:
				return err
			}
			if why != "" {
				lastWhy[m.Name] = why
				pending = append(pending, why)
			}
		}
		if len(pending) == 0 {
			if reported {
				backends.Progress(ctx, "service discovery ready after %s", time.Since(start).Round(10*time.Millisecond))
			}
			return nil
		}
		if !reported && time.Since(start) > time.Second {
			backends.Progress(ctx, "waiting for service discovery: %s", strings.Join(pending, "; "))
			reported = true
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("members restored but not ready after %s: %s", deadline, strings.Join(pending, "; "))
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errInspectionCut: the wait's context ended a member's inspection before it answered.
var errInspectionCut = errors.New("inspection cut short")

// notYetNamed says why member m (container id) is not yet running and named on its networks,
// or "" when it is. A member that exited is an error: waiting will not bring it back; an
// inspection the context ended is errInspectionCut.
func (b *Backend) notYetNamed(ctx context.Context, m memberRecipe, id string) (string, error) {
	ins, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return "", errInspectionCut
		}
		return "", fmt.Errorf("inspect %s: %w", m.Name, err)
	}
	c := ins.Container
	if c.State == nil || !c.State.Running {
		if c.State != nil && c.State.Status == container.StateExited {
			return "", fmt.Errorf("%s exited (code %d) right after it was started", m.Name, c.State.ExitCode)
		}
		return m.Name + " not running yet", nil
	}
	for net, want := range m.Endpoints {
		var got *network.EndpointSettings
		if c.NetworkSettings != nil {
			got = c.NetworkSettings.Networks[net]
		}
		if got == nil || got.EndpointID == "" {
			return fmt.Sprintf("%s not attached to %s yet", m.Name, net), nil
		}
		for _, alias := range want.Aliases {
			if !slices.Contains(got.Aliases, alias) {
				return fmt.Sprintf("%s not registered as %q on %s yet", m.Name, alias, net), nil
			}
		}
	}
	return "", nil
}

// ensureNetworks recreates the project's networks that are missing, with their compose labels,
// driver, options and address plan; a missing network from outside the project is an error.
func (b *Backend) ensureNetworks(ctx context.Context, nets []networkRecipe) error {
	for _, n := range nets {
		_, err := b.cli.NetworkInspect(ctx, n.Name, client.NetworkInspectOptions{})
		if err == nil {
			continue
		}
		if !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("network %s: %w", n.Name, err)
		}
		if !n.Project {
			return fmt.Errorf("network %s is gone and is not the project's own, so it is not recreated; create it and revert again", n.Name)
		}
		opts := client.NetworkCreateOptions{Driver: n.Driver, Internal: n.Internal, Attachable: n.Attachable,
			IPAM: n.IPAM, Options: n.Options, Labels: n.Labels}
		if n.EnableIPv6 {
			opts.EnableIPv6 = &n.EnableIPv6
		}
		if _, err := b.cli.NetworkCreate(ctx, n.Name, opts); err != nil && !cerrdefs.IsConflict(err) {
			return fmt.Errorf("recreate network %s: %w", n.Name, err)
		}
	}
	return nil
}

// recreateVolume replaces a named volume by an empty one with the same name, driver, options and
// labels, so files created after the snapshot disappear.
func (b *Backend) recreateVolume(ctx context.Context, v volumeRecipe) error {
	if _, err := b.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
		if cerrdefs.IsConflict(err) {
			return fmt.Errorf("volume %s is in use by a container outside the sandbox; stop it and revert again: %w", v.Name, err)
		}
		return fmt.Errorf("remove volume %s: %w", v.Name, err)
	}
	if _, err := b.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: v.Name, Driver: v.Driver, DriverOpts: v.DriverOpts, Labels: v.Labels}); err != nil {
		return fmt.Errorf("recreate volume %s: %w", v.Name, err)
	}
	return nil
}

// restoreVolume writes an archive into a volume through a created, never-started container of
// the member's snapshot image (so no helper image is needed and read-only mounts do not matter).
func (b *Backend) restoreVolume(ctx context.Context, sandboxID string, m memberRecipe, volume, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("volume archive: %w", err)
	}
	defer f.Close()
	labels := map[string]string{labelRestore: sandboxID}
	for k, v := range m.Config.Labels {
		switch {
		case strings.HasPrefix(k, "com.docker.compose."):
			labels[k] = "" // inherited from the image: blank them so the helper is no sandbox member
		case strings.HasPrefix(k, "dev.rangekeeper.test"):
			labels[k] = v
		}
	}
	res, err := b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: m.Image, Entrypoint: []string{restoreMount + "/never-started"}, Cmd: []string{}, Labels: labels, NetworkDisabled: true},
		HostConfig: &container.HostConfig{NetworkMode: "none", Mounts: []mount.Mount{{
			Type: mount.TypeVolume, Source: volume, Target: restoreMount, VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}},
	})
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = b.cli.ContainerRemove(rctx, res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}()
	_, err = b.cli.CopyToContainer(ctx, res.ID, client.CopyToContainerOptions{DestinationPath: restoreMount, Content: f})
	return err
}

// restoreAnonymous fills the fresh anonymous volume the engine made for a recreated member.
func (b *Backend) restoreAnonymous(ctx context.Context, sandboxID string, m memberRecipe, id string, v volumeRecipe, dir string) error {
	ins, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return err
	}
	for _, mp := range ins.Container.Mounts {
		if mp.Destination == v.Path && mp.Type == mount.TypeVolume {
			return b.restoreVolume(ctx, sandboxID, m, mp.Name, filepath.Join(dir, v.File))
		}
	}
	return errors.New("the recreated member has no volume there")
}

// recreateMember creates one member (not started) and joins its networks. API 1.41 engines take
// one endpoint at create, so the others are connected afterwards.
func (b *Backend) recreateMember(ctx context.Context, m memberRecipe, newID map[string]string) (string, error) {
	hc := *m.HostConfig
	remap := func(mode string) string {
		if ref, ok := strings.CutPrefix(mode, "container:"); ok {
			if id, ok := newID[ref]; ok {
				return "container:" + id
			}
		}
		return mode
	}
	hc.NetworkMode = container.NetworkMode(remap(string(hc.NetworkMode)))
	hc.IpcMode = container.IpcMode(remap(string(hc.IpcMode)))
	hc.PidMode = container.PidMode(remap(string(hc.PidMode)))

	primary := string(hc.NetworkMode)
	if primary == "default" {
		primary = "bridge"
	}
	var nc *network.NetworkingConfig
	if ep, ok := m.Endpoints[primary]; ok {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{primary: ep}}
	}
	res, err := b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: m.Name, Config: m.Config, HostConfig: &hc, NetworkingConfig: nc})
	if err != nil {
		return "", err
	}
	for name, ep := range m.Endpoints {
		if name == primary {
			continue
		}
		if _, err := b.cli.NetworkConnect(ctx, name, client.NetworkConnectOptions{Container: res.ID, EndpointConfig: ep}); err != nil {
			return res.ID, fmt.Errorf("connect to network %s: %w", name, err)
		}
	}
	return res.ID, nil
}

// removeRestoreHelpers removes restore containers an interrupted revert left behind.
func (b *Backend) removeRestoreHelpers(ctx context.Context, sandboxID string) error {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", labelRestore+"="+sandboxID)})
	if err != nil {
		return err
	}
	for _, c := range res.Items {
		if _, err := b.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
			return err
		}
	}
	return nil
}

package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.TearDowner = (*Backend)(nil)

// Teardown implements backends.TearDowner: it removes the project's containers, then its networks
// and volumes (found by the com.docker.compose.project label, so nothing of another project or
// unlabelled is touched), then its snapshot images and records unless KeepSnapshots. A plain
// container (not compose-labelled) is refused with ErrNotSandbox unless Force, which removes
// that one container.
func (b *Backend) Teardown(ctx context.Context, sandboxID string, opts backends.TeardownOptions) error {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	project, err := b.ProjectOf(sandboxID)
	if errors.Is(err, backends.ErrNotSandbox) && opts.Force {
		return b.teardownPlain(ctx, sandboxID)
	}
	if err != nil {
		return err
	}
	return b.teardownSandbox(ctx, sandboxID, project, teardownOpts{TeardownOptions: opts})
}

// teardownOpts adds what only a recovery sets: a sandbox with nothing left is not an error.
type teardownOpts struct {
	backends.TeardownOptions
	recovering bool
}

func (b *Backend) teardownSandbox(ctx context.Context, sandboxID, project string, opts teardownOpts) error {
	inv, err := b.composeInventory(ctx, LabelProject+"="+project, LabelSnapshotSandbox+"="+sandboxID)
	if err != nil {
		return b.wrap(fmt.Errorf("teardown %s: %w", project, err))
	}
	return b.teardownProject(ctx, sandboxID, project, inv, opts)
}

// composeInventory is every compose-labelled container, network and volume matching one label
// filter, grouped by project.
type composeInventory struct {
	containers map[string][]container.Summary
	networks   map[string][]network.Summary
	volumes    map[string][]string
	images     map[string][]snapshotImage // snapshot images by sandbox ID
}

// snapshotImage is one snapshot image and the state file whose record owns it.
type snapshotImage struct {
	ID    string
	Store string
}

func (b *Backend) composeInventory(ctx context.Context, projectFilter, imageFilter string) (composeInventory, error) {
	f := make(client.Filters).Add("label", projectFilter)
	inv := composeInventory{containers: map[string][]container.Summary{}, networks: map[string][]network.Summary{},
		volumes: map[string][]string{}, images: map[string][]snapshotImage{}}
	ims, err := b.cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: make(client.Filters).Add("label", imageFilter)})
	if err != nil {
		return inv, err
	}
	for _, im := range ims.Items {
		sb := im.Labels[LabelSnapshotSandbox]
		inv.images[sb] = append(inv.images[sb], snapshotImage{ID: im.ID, Store: im.Labels[LabelSnapshotStore]})
	}
	cs, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return inv, err
	}
	for _, c := range cs.Items {
		inv.containers[c.Labels[LabelProject]] = append(inv.containers[c.Labels[LabelProject]], c)
	}
	ns, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return inv, err
	}
	for _, n := range ns.Items {
		inv.networks[n.Labels[LabelProject]] = append(inv.networks[n.Labels[LabelProject]], n)
	}
	vs, err := b.cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return inv, err
	}
	for _, v := range vs.Items {
		inv.volumes[v.Labels[LabelProject]] = append(inv.volumes[v.Labels[LabelProject]], v.Name)
	}
	return inv, nil
}

// teardownProject removes what inv lists for project, then the snapshot images and records.
func (b *Backend) teardownProject(ctx context.Context, sandboxID, project string, inv composeInventory, opts teardownOpts) error {
	cs, nets, vols := inv.containers[project], inv.networks[project], inv.volumes[project]
	if len(cs) == 0 && len(nets) == 0 && len(vols) == 0 && !opts.recovering {
		return fmt.Errorf("%w: no containers, networks or volumes labelled %s=%s on %s", backends.ErrNotFound, LabelProject, project, b.Name())
	}
	if err := backends.RecordPlan(ctx, teardownPlan{Project: project, KeepSnapshots: opts.KeepSnapshots}); err != nil {
		return fmt.Errorf("teardown %s: nothing changed: %w", project, err)
	}
	snapshots := b.hasSnapshots(sandboxID)
	// Restore helpers exist only where a revert ran, which needs a snapshot record.
	if snapshots {
		if err := b.removeRestoreHelpers(ctx, sandboxID); err != nil {
			return b.wrap(fmt.Errorf("teardown %s: %w", project, err))
		}
	}
	// Anonymous volumes go with their containers; named ones are removed below by label.
	if err := parallel(len(cs), func(i int) error {
		_, err := b.cli.ContainerRemove(ctx, cs[i].ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("container %s: %w", containerName(cs[i]), err)
		}
		return nil
	}); err != nil {
		return b.wrap(fmt.Errorf("teardown %s: %w", project, err))
	}
	backends.Progress(ctx, "removed %d containers", len(cs))
	var errs []error
	for _, n := range nets {
		if _, err := b.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("network %s (still used by a container outside the sandbox?): %w", n.Name, err))
		}
	}
	backends.Progress(ctx, "removed %d networks", len(nets))
	for _, v := range vols {
		if _, err := b.cli.VolumeRemove(ctx, v, client.VolumeRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume %s: %w", v, err))
		}
	}
	backends.Progress(ctx, "removed %d volumes", len(vols))
	if !opts.KeepSnapshots {
		own, others := b.ownImages(inv.images[sandboxID])
		imgErr := b.removeImageIDs(ctx, own)
		if imgErr != nil {
			errs = append(errs, fmt.Errorf("snapshot images: %w", imgErr))
		}
		backends.Progress(ctx, "removed %d snapshot images", len(own))
		for store, n := range others {
			backends.Progress(ctx, "kept %d snapshot images that state file %s records", n, store)
		}
		if imgErr == nil && snapshots {
			if err := b.forgetSnapshots(sandboxID); err != nil {
				errs = append(errs, err)
			}
			backends.Progress(ctx, "forgot the snapshot records")
		}
	}
	if len(errs) > 0 {
		return b.wrap(fmt.Errorf("teardown %s: containers removed, but: %w", project, errors.Join(errs...)))
	}
	return nil
}

// teardownPlan is a teardown's write-ahead plan; recovering it tears down what is left.
type teardownPlan struct {
	Project       string `json:"project"`
	KeepSnapshots bool   `json:"keep_snapshots"`
}

// ownImages splits snapshot images into this store's (or unlabelled ones, from before stores
// were named) and, per other state file, how many another process's records own: a teardown
// never deletes a snapshot another state file records.
func (b *Backend) ownImages(ims []snapshotImage) (own []string, others map[string]int) {
	me := b.storeID()
	others = map[string]int{}
	for _, im := range ims {
		if im.Store == "" || me == "" || im.Store == me {
			own = append(own, im.ID)
		} else {
			others[im.Store]++
		}
	}
	return own, others
}

// hasSnapshots reports whether the store holds a snapshot of the sandbox (true when unsure).
func (b *Backend) hasSnapshots(sandboxID string) bool {
	db := b.opts.Snapshots
	if db == nil {
		return true
	}
	recs, err := db.Snapshots(sandboxID)
	return err != nil || len(recs) > 0
}

// forgetSnapshots deletes the sandbox's snapshot records and volume archives (its images are gone).
func (b *Backend) forgetSnapshots(sandboxID string) error {
	db := b.opts.Snapshots
	if db == nil {
		return nil
	}
	recs, err := db.Snapshots(sandboxID)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Backend != b.Name() {
			continue
		}
		if err := os.RemoveAll(db.ArchiveDir(r.Info.ID)); err != nil {
			return err
		}
		if err := db.DeleteSnapshot(sandboxID, r.Info.ID); err != nil {
			return err
		}
	}
	return nil
}

// teardownPlain force-removes one container listed with --all (only with Force).
func (b *Backend) teardownPlain(ctx context.Context, sandboxID string) error {
	rest, _ := strings.CutPrefix(sandboxID, b.Name()+"/")
	name := strings.TrimPrefix(rest, plainPrefix)
	if _, err := b.cli.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("%w: container %s", backends.ErrNotFound, name)
		}
		return b.wrap(fmt.Errorf("teardown container %s: %w", name, err))
	}
	return nil
}

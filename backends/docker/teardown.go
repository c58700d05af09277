package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

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
	byProject := make(client.Filters).Add("label", LabelProject+"="+project)
	cs, err := b.members(ctx, project)
	if err != nil {
		return err
	}
	nets, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: byProject})
	if err != nil {
		return b.wrap(err)
	}
	vols, err := b.cli.VolumeList(ctx, client.VolumeListOptions{Filters: byProject})
	if err != nil {
		return b.wrap(err)
	}
	if len(cs) == 0 && len(nets.Items) == 0 && len(vols.Items) == 0 {
		return fmt.Errorf("%w: no containers, networks or volumes labelled %s=%s on %s", backends.ErrNotFound, LabelProject, project, b.Name())
	}
	// Restore helpers exist only where a revert ran, which needs a snapshot record.
	if b.hasSnapshots(sandboxID) {
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
	var errs []error
	for _, n := range nets.Items {
		if _, err := b.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("network %s (still used by a container outside the sandbox?): %w", n.Name, err))
		}
	}
	for _, v := range vols.Items {
		if _, err := b.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume %s: %w", v.Name, err))
		}
	}
	if !opts.KeepSnapshots {
		if err := b.removeImages(ctx, make(client.Filters).Add("label", LabelSnapshotSandbox+"="+sandboxID)); err != nil {
			errs = append(errs, fmt.Errorf("snapshot images: %w", err))
		} else if err := b.forgetSnapshots(sandboxID); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return b.wrap(fmt.Errorf("teardown %s: containers removed, but: %w", project, errors.Join(errs...)))
	}
	return nil
}

// hasSnapshots reports whether the store holds a snapshot of the sandbox (true when unsure).
func (b *Backend) hasSnapshots(sandboxID string) bool {
	b.storeMu.Lock()
	db := b.store
	b.storeMu.Unlock()
	if db == nil {
		return true
	}
	recs, err := db.Snapshots(sandboxID)
	return err != nil || len(recs) > 0
}

// forgetSnapshots deletes the sandbox's snapshot records and volume archives (its images are gone).
func (b *Backend) forgetSnapshots(sandboxID string) error {
	b.storeMu.Lock()
	db := b.store
	b.storeMu.Unlock()
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
		if err := os.RemoveAll(archiveDir(db, r.Info.ID)); err != nil {
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

// TeardownMany tears down several sandboxes with at most parallelism at once (≤ 0 means 4) and
// returns the failures by sandbox ID (empty when every teardown succeeded).
func (b *Backend) TeardownMany(ctx context.Context, ids []string, opts backends.TeardownOptions, parallelism int) map[string]error {
	if parallelism <= 0 {
		parallelism = 4
	}
	sem := make(chan struct{}, parallelism)
	var (
		mu   sync.Mutex
		fail = map[string]error{}
		wg   sync.WaitGroup
	)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				mu.Lock()
				fail[id] = ctx.Err()
				mu.Unlock()
				return
			}
			defer func() { <-sem }()
			if err := b.Teardown(ctx, id, opts); err != nil {
				mu.Lock()
				fail[id] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return fail
}

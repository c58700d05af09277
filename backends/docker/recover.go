package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.Recoverer = (*Backend)(nil)

// Recover implements backends.Recoverer from an action's write-ahead plan. A snapshot cut short
// is rolled back (its members unpaused, its partial images and archives removed) unless its
// record was saved, when it is kept; a revert is finished from the snapshot record, even with no
// member left; a teardown removes what is left; a snapshot deletion is finished. An action cut
// short before it recorded a plan had changed nothing.
func (b *Backend) Recover(ctx context.Context, rec backends.PendingAction) (string, error) {
	if len(rec.Plan) == 0 {
		return "nothing had changed (cut short before its first step)", nil
	}
	switch backends.Action(rec.Action) {
	case backends.ActionSnapshot:
		var p snapshotPlan
		if err := json.Unmarshal(rec.Plan, &p); err != nil {
			return "", fmt.Errorf("snapshot plan: %w", err)
		}
		return b.recoverSnapshot(ctx, rec.SandboxID, p)
	case backends.ActionRevert:
		var p revertPlan
		if err := json.Unmarshal(rec.Plan, &p); err != nil {
			return "", fmt.Errorf("revert plan: %w", err)
		}
		if err := b.Revert(ctx, rec.SandboxID, p.SnapshotID, backends.RevertOptions{}); err != nil {
			return "", err
		}
		return "completed: reverted to " + p.SnapshotID, nil
	case backends.ActionTeardown:
		var p teardownPlan
		if err := json.Unmarshal(rec.Plan, &p); err != nil {
			return "", fmt.Errorf("teardown plan: %w", err)
		}
		if err := b.teardownSandbox(ctx, rec.SandboxID, p.Project, teardownOpts{TeardownOptions: backends.TeardownOptions{KeepSnapshots: p.KeepSnapshots}, recovering: true}); err != nil {
			return "", err
		}
		return "completed: torn down", nil
	case backends.ActionDeleteSnapshot:
		var p deletePlan
		if err := json.Unmarshal(rec.Plan, &p); err != nil {
			return "", fmt.Errorf("snapshot deletion plan: %w", err)
		}
		if err := b.deleteSnapshot(ctx, rec.SandboxID, p.SnapshotID); err != nil {
			return "", err
		}
		return "completed: snapshot " + p.SnapshotID + " deleted", nil
	}
	return "", fmt.Errorf("%s cannot recover a %s", b.Name(), rec.Action)
}

// recoverSnapshot unpauses the members the snapshot paused, then keeps a snapshot whose record
// was saved or removes what a partial one made.
func (b *Backend) recoverSnapshot(ctx context.Context, sandboxID string, p snapshotPlan) (string, error) {
	var unpaused []string
	for _, m := range p.Members {
		if !m.Pause {
			continue
		}
		ins, err := b.cli.ContainerInspect(ctx, m.ID, client.ContainerInspectOptions{})
		if cerrdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", b.wrap(fmt.Errorf("inspect %s: %w", m.Name, err))
		}
		if ins.Container.State != nil && ins.Container.State.Paused {
			if _, err := b.cli.ContainerUnpause(ctx, m.ID, client.ContainerUnpauseOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
				return "", b.wrap(fmt.Errorf("unpause %s: %w", m.Name, err))
			}
			unpaused = append(unpaused, m.Name)
		}
	}
	note := ""
	if len(unpaused) > 0 {
		note = "; unpaused " + strings.Join(unpaused, ", ")
	}
	db, err := b.snapshotStore()
	if err != nil {
		return "", err
	}
	if _, ok, err := db.Snapshot(sandboxID, p.SnapshotID); err != nil {
		return "", err
	} else if ok {
		return "completed: snapshot " + p.SnapshotID + " had been saved" + note, nil
	}
	if err := b.removeSnapshotImagesCtx(ctx, p.SnapshotID); err != nil {
		return "", b.wrap(fmt.Errorf("remove partial images of %s: %w", p.SnapshotID, err))
	}
	if err := os.RemoveAll(p.ArchiveDir); err != nil {
		return "", fmt.Errorf("remove partial archives of %s: %w", p.SnapshotID, err)
	}
	return "rolled back: partial snapshot " + p.SnapshotID + " removed" + note, nil
}

// deletePlan is a snapshot deletion's write-ahead plan.
type deletePlan struct {
	SnapshotID string `json:"snapshot"`
}

// SnapshotImageBytes is the size of a snapshot's images (action.SnapshotSizer), for pruning.
func (b *Backend) SnapshotImageBytes(ctx context.Context, snapshotID string) (int64, error) {
	imgs, err := b.cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: make(client.Filters).Add("label", LabelSnapshot+"="+snapshotID)})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, im := range imgs.Items {
		n += im.Size
	}
	return n, nil
}

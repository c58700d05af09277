package action

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
)

// ResolveSandbox is the one rule, for the CLI and the TUI alike, that turns what an operator typed
// into a sandbox: its full ID, else its name or the end of its ID after the kind ("<endpoint>/
// <project>", "<namespace>/<release>"), which must be unique. A full ID that is not in the fleet is not guessed at.
func ResolveSandbox(fleet []backends.Sandbox, arg string) (backends.Sandbox, error) {
	for _, sb := range fleet {
		if sb.ID == arg {
			return sb, nil
		}
	}
	if _, err := backends.ParseID(arg); err == nil {
		return backends.Sandbox{}, fmt.Errorf("%w: no sandbox with ID %q (see `rangekeeper ls`)", backends.ErrNotFound, arg)
	}
	var found []backends.Sandbox
	for _, sb := range fleet {
		if sb.Name == arg || matchesTail(sb.ID, arg) {
			found = append(found, sb)
		}
	}
	switch len(found) {
	case 0:
		return backends.Sandbox{}, fmt.Errorf("%w: no sandbox named %q (see `rangekeeper ls`)", backends.ErrNotFound, arg)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, sb := range found {
		ids[i] = sb.ID
	}
	sort.Strings(ids)
	return backends.Sandbox{}, fmt.Errorf("sandbox %q is %w; use one of: %s", arg, ErrAmbiguous, strings.Join(ids, ", "))
}

// matchesTail reports whether arg is the end of id after its kind: "<endpoint>/<name>",
// "<namespace>/<release>"...
func matchesTail(id, arg string) bool {
	_, rest, ok := strings.Cut(id, ":")
	return ok && (rest == arg || strings.HasSuffix(rest, "/"+arg))
}

// Resolve resolves arg against the layer's live fleet.
func (l *Layer) Resolve(arg string) (backends.Sandbox, error) {
	return ResolveSandbox(l.resolver.Fleet(), arg)
}

// ResolveSnapshot finds a sandbox's snapshot by its ID or its unique name; "" is the newest.
// Not found names the sandbox and the snapshot; ambiguous lists the candidates.
func (l *Layer) ResolveSnapshot(ctx context.Context, sandboxID, ref string) (backends.SnapshotInfo, error) {
	snaps, err := l.Snapshots(ctx, sandboxID)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	return PickSnapshot(snaps, backends.ShortName(sandboxID), ref)
}

// PickSnapshot applies ResolveSnapshot's rule to a listed set (oldest first).
func PickSnapshot(snaps []backends.SnapshotInfo, sandboxName, ref string) (backends.SnapshotInfo, error) {
	if len(snaps) == 0 {
		return backends.SnapshotInfo{}, fmt.Errorf("%w: %s has no snapshots", backends.ErrSnapshotNotFound, sandboxName)
	}
	if ref == "" {
		newest := snaps[0]
		for _, s := range snaps[1:] {
			if !s.Created.Before(newest.Created) {
				newest = s
			}
		}
		return newest, nil
	}
	var byName []backends.SnapshotInfo
	for _, s := range snaps {
		if s.ID == ref {
			return s, nil
		}
		if s.Name == ref {
			byName = append(byName, s)
		}
	}
	switch len(byName) {
	case 0:
		return backends.SnapshotInfo{}, fmt.Errorf("%w: %s has no snapshot with ID or name %q (see `rangekeeper snapshots ls %s`)",
			backends.ErrSnapshotNotFound, sandboxName, ref, sandboxName)
	case 1:
		return byName[0], nil
	}
	var c []string
	for _, s := range byName {
		c = append(c, fmt.Sprintf("%s (%s)", s.ID, s.Created.UTC().Format("2006-01-02 15:04:05")))
	}
	return backends.SnapshotInfo{}, fmt.Errorf("snapshot name %q of %s is %w; use an ID: %s", ref, sandboxName, ErrAmbiguous, strings.Join(c, ", "))
}

package docker

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.Snapshotter = (*Backend)(nil)

// Labels on snapshot images: which snapshot and which sandbox they belong to.
const (
	LabelSnapshotSandbox = "dev.rangekeeper.snapshot.sandbox"
	// LabelSnapshotStore names the state file whose record owns the image: a teardown by a
	// process with another state file leaves it alone.
	LabelSnapshotStore = "dev.rangekeeper.snapshot.store"
	snapshotRepo       = "rangekeeper-snapshot"
)

// Snapshot storage: the recipe (configs, endpoints, order) is a backends.SnapshotRecord in the
// store given at construction (Options.Snapshots); the volume archives are tar files in the
// store's ArchiveDir, because volume contents are unbounded.

func (b *Backend) snapshotStore() (backends.SnapshotStore, error) {
	if b.opts.Snapshots == nil {
		return nil, fmt.Errorf("%s: snapshots need a snapshot store (none was given to the backend)", b.Name())
	}
	return b.opts.Snapshots, nil
}

// snapshotData is the backend's recipe for recreating a sandbox exactly (SnapshotRecord.Data).
type snapshotData struct {
	Project  string          `json:"project"`
	Salt     string          `json:"salt,omitempty"` // of the members' environment hashes
	Members  []memberRecipe  `json:"members"`        // in start order
	Networks []networkRecipe `json:"networks"`
	Volumes  []volumeRecipe  `json:"volumes"`
}

type memberRecipe struct {
	OldID      string                               `json:"old_id"`
	Name       string                               `json:"name"`
	Service    string                               `json:"service"`
	Image      string                               `json:"image"` // snapshot image reference
	ImageID    string                               `json:"image_id"`
	Running    bool                                 `json:"running"`
	Config     *container.Config                    `json:"config"` // Env is empty: see Env
	Env        []envVar                             `json:"env,omitempty"`
	HostConfig *container.HostConfig                `json:"host_config"`
	Endpoints  map[string]*network.EndpointSettings `json:"endpoints"` // network name → aliases, static IPs, links
	Mounts     []container.MountPoint               `json:"mounts"`    // volume mounts, whose contents are archived
}

type networkRecipe struct {
	Name       string            `json:"name"`
	Project    bool              `json:"project"` // compose-labelled for this project: revert recreates it
	Driver     string            `json:"driver,omitempty"`
	Internal   bool              `json:"internal,omitempty"`
	Attachable bool              `json:"attachable,omitempty"`
	EnableIPv6 bool              `json:"ipv6,omitempty"`
	IPAM       *network.IPAM     `json:"ipam,omitempty"`
	Options    map[string]string `json:"options,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

type volumeRecipe struct {
	Name       string            `json:"name"`      // engine volume name
	Anonymous  bool              `json:"anonymous"` // not named in the member's config: recreated by the engine
	Driver     string            `json:"driver,omitempty"`
	DriverOpts map[string]string `json:"driver_opts,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Member     string            `json:"member"` // container name it was archived from
	Path       string            `json:"path"`   // mount destination in that member
	File       string            `json:"file"`   // archive file name under the snapshot's directory
	Size       int64             `json:"size"`
}

func newSnapshotID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "s" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// Snapshot implements backends.Snapshotter. Every running member is paused (unless NoPause) so the
// images and volume archives are one consistent point in time; commits run concurrently.
func (b *Backend) Snapshot(ctx context.Context, sandboxID string, opts backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	db, err := b.snapshotStore()
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	project, err := b.ProjectOf(sandboxID)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	cs, err := b.members(ctx, project)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	if len(cs) == 0 {
		return backends.SnapshotInfo{}, fmt.Errorf("%w: %s has no containers", backends.ErrNotFound, sandboxID)
	}
	id := newSnapshotID()
	dir := db.ArchiveDir(id)
	inspected := make([]container.InspectResponse, len(cs))
	if err := parallel(len(cs), func(i int) error {
		r, err := b.cli.ContainerInspect(ctx, cs[i].ID, client.ContainerInspectOptions{})
		inspected[i] = r.Container
		return err
	}); err != nil {
		return backends.SnapshotInfo{}, b.wrap(fmt.Errorf("snapshot %s: inspect: %w", project, err))
	}

	plan := snapshotPlan{Project: project, SnapshotID: id, ArchiveDir: dir}
	for _, c := range inspected {
		plan.Members = append(plan.Members, pausePlan{ID: c.ID, Name: strings.TrimPrefix(c.Name, "/"),
			Pause: !opts.NoPause && c.State != nil && c.State.Running && !c.State.Paused})
	}
	if err := backends.RecordPlan(ctx, plan); err != nil {
		return backends.SnapshotInfo{}, fmt.Errorf("snapshot %s: nothing changed: %w", project, err)
	}
	unpause := func() {}
	if !opts.NoPause {
		var err error
		unpause, err = b.pauseAll(ctx, inspected)
		defer func() { unpause() }()
		if err != nil {
			return backends.SnapshotInfo{}, b.wrap(fmt.Errorf("snapshot %s: pause: %w", project, err))
		}
		backends.Progress(ctx, "paused %d members", len(inspected))
	}

	data := snapshotData{Project: project, Salt: newSalt()}
	data.Members = make([]memberRecipe, len(inspected))
	labels := map[string]string{LabelSnapshot: id, LabelSnapshotSandbox: sandboxID}
	if store := b.storeID(); store != "" {
		labels[LabelSnapshotStore] = store
	}
	err = parallel(len(inspected), func(i int) error {
		c := inspected[i]
		ref := fmt.Sprintf("%s:%s.%s", snapshotRepo, id, c.ID[:12])
		res, err := b.cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{
			Reference: ref, NoPause: true, Comment: "rangekeeper snapshot " + id + " of " + sandboxID,
			Config: &container.Config{Labels: labels},
		})
		if err != nil {
			return fmt.Errorf("commit %s: %w", strings.TrimPrefix(c.Name, "/"), err)
		}
		data.Members[i] = recipeOf(c, ref, res.ID, data.Salt)
		backends.Progress(ctx, "committed %s", data.Members[i].Name)
		return nil
	})
	if err != nil {
		b.removeSnapshotImages(id)
		return backends.SnapshotInfo{}, b.wrap(fmt.Errorf("snapshot %s: %w", project, err))
	}
	if data.Networks, err = b.networkRecipes(ctx, project, inspected); err != nil {
		b.removeSnapshotImages(id)
		return backends.SnapshotInfo{}, b.wrap(fmt.Errorf("snapshot %s: %w", project, err))
	}
	if data.Volumes, err = b.archiveVolumes(ctx, dir, inspected); err != nil {
		b.removeSnapshotImages(id)
		_ = os.RemoveAll(dir)
		return backends.SnapshotInfo{}, b.wrap(fmt.Errorf("snapshot %s: volumes: %w", project, err))
	}
	data.Members = startOrder(data.Members)

	info := backends.SnapshotInfo{ID: id, SandboxID: sandboxID, Name: opts.Name, Created: time.Now().UTC(),
		Details: map[string]string{"project": project, "paused": fmt.Sprint(!opts.NoPause)}}
	if info.Name == "" {
		info.Name = id
	}
	if opts.Description != "" {
		info.Details["description"] = opts.Description
	}
	for _, m := range data.Members {
		info.Members = append(info.Members, m.Name)
	}
	var vbytes int64
	for _, v := range data.Volumes {
		vbytes += v.Size
	}
	info.Size = vbytes
	info.Details["volumes"] = fmt.Sprint(len(data.Volumes))
	info.Details["volume_bytes"] = fmt.Sprint(vbytes)
	raw, err := json.Marshal(data)
	if err != nil {
		return backends.SnapshotInfo{}, err
	}
	if err := db.PutSnapshot(backends.SnapshotRecord{Info: info, Backend: b.Name(), Data: raw}); err != nil {
		b.removeSnapshotImages(id)
		_ = os.RemoveAll(dir)
		return backends.SnapshotInfo{}, fmt.Errorf("snapshot %s: save record: %w", project, err)
	}
	backends.Progress(ctx, "saved record of %s", id)
	unpause()
	unpause = func() {}
	if !opts.NoPause {
		backends.Progress(ctx, "unpaused %d members", len(inspected))
	}
	return info, nil
}

// snapshotPlan is a snapshot's write-ahead plan: which members it pauses and what it makes, so
// a snapshot cut short is rolled back (members unpaused, partial images and archives removed)
// or, when its record was saved, kept.
type snapshotPlan struct {
	Project    string      `json:"project"`
	SnapshotID string      `json:"snapshot"`
	ArchiveDir string      `json:"archive_dir"`
	Members    []pausePlan `json:"members"`
}

type pausePlan struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Pause bool   `json:"pause"` // running and not paused before: the snapshot pauses it
}

// storeID names the snapshot store (its state file) on the images it owns, "" when unknown.
func (b *Backend) storeID() string {
	if s, ok := b.opts.Snapshots.(interface{ StoreID() string }); ok {
		return s.StoreID()
	}
	return ""
}

// pauseAll pauses the running members; the returned function unpauses them (on a fresh context,
// because it must run even when ctx was cancelled).
func (b *Backend) pauseAll(ctx context.Context, cs []container.InspectResponse) (func(), error) {
	paused := make([]bool, len(cs))
	err := parallel(len(cs), func(i int) error {
		if cs[i].State == nil || !cs[i].State.Running || cs[i].State.Paused {
			return nil
		}
		if _, err := b.cli.ContainerPause(ctx, cs[i].ID, client.ContainerPauseOptions{}); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimPrefix(cs[i].Name, "/"), err)
		}
		paused[i] = true
		return nil
	})
	return func() {
		uctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = parallel(len(cs), func(i int) error {
			if paused[i] {
				_, _ = b.cli.ContainerUnpause(uctx, cs[i].ID, client.ContainerUnpauseOptions{})
			}
			return nil
		})
	}, err
}

// recordedAliases drops only the alias the engine adds itself: the 12-character short container
// ID. Comparing with a prefix of the ID instead would also drop a service alias such as "b" or
// "a1" whenever the (hex) ID happens to start with it, and the reverted member would lose its
// service name on the network.
func recordedAliases(containerID string, aliases []string) []string {
	short := containerID
	if len(short) > 12 {
		short = short[:12]
	}
	var keep []string
	for _, a := range aliases {
		if a != short {
			keep = append(keep, a)
		}
	}
	return keep
}

// recipeOf records what ContainerCreate and NetworkConnect need to recreate c from image ref.
func recipeOf(c container.InspectResponse, ref, imageID, salt string) memberRecipe {
	cfg := *c.Config
	cfg.Image = ref
	env := sealEnv(salt, cfg.Env)
	cfg.Env = nil // values stay in the snapshot image's config; the record keeps names and hashes
	m := memberRecipe{Env: env,
		OldID: c.ID, Name: strings.TrimPrefix(c.Name, "/"), Service: c.Config.Labels[LabelService],
		Image: ref, ImageID: imageID, Running: c.State != nil && c.State.Running,
		Config: &cfg, HostConfig: c.HostConfig, Endpoints: map[string]*network.EndpointSettings{},
	}
	if c.NetworkSettings != nil {
		for name, ep := range c.NetworkSettings.Networks {
			if ep == nil {
				continue
			}
			keep := &network.EndpointSettings{IPAMConfig: ep.IPAMConfig, Links: ep.Links, DriverOpts: ep.DriverOpts}
			keep.Aliases = recordedAliases(c.ID, ep.Aliases)
			m.Endpoints[name] = keep
		}
	}
	for _, mp := range c.Mounts {
		if mp.Type == mount.TypeVolume {
			m.Mounts = append(m.Mounts, mp)
		}
	}
	return m
}

// networkRecipes records every network a member joins; the project's own (compose-labelled)
// networks with everything needed to recreate them.
func (b *Backend) networkRecipes(ctx context.Context, project string, cs []container.InspectResponse) ([]networkRecipe, error) {
	seen := map[string]bool{}
	var out []networkRecipe
	for _, c := range cs {
		if c.NetworkSettings == nil {
			continue
		}
		for name := range c.NetworkSettings.Networks {
			if seen[name] {
				continue
			}
			seen[name] = true
			n, err := b.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{})
			if err != nil {
				return nil, fmt.Errorf("network %s: %w", name, err)
			}
			nw := n.Network
			r := networkRecipe{Name: name, Project: nw.Labels[LabelProject] == project}
			if r.Project {
				ipam := nw.IPAM
				r.Driver, r.Internal, r.Attachable, r.EnableIPv6 = nw.Driver, nw.Internal, nw.Attachable, nw.EnableIPv6
				r.IPAM, r.Options, r.Labels = &ipam, nw.Options, nw.Labels
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// archiveVolumes streams each mounted volume's contents (once per volume) into a tar file in
// dir, rebased so entries are relative to the mount point.
func (b *Backend) archiveVolumes(ctx context.Context, dir string, cs []container.InspectResponse) ([]volumeRecipe, error) {
	seen := map[string]bool{}
	var out []volumeRecipe
	for _, c := range cs {
		named := namedVolumes(c.HostConfig)
		for _, mp := range c.Mounts {
			if mp.Type != mount.TypeVolume || seen[mp.Name] {
				continue
			}
			seen[mp.Name] = true
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
			v := volumeRecipe{Name: mp.Name, Anonymous: !named[mp.Name], Member: strings.TrimPrefix(c.Name, "/"),
				Path: mp.Destination, File: fmt.Sprintf("vol-%d.tar", len(out))}
			if vi, err := b.cli.VolumeInspect(ctx, mp.Name, client.VolumeInspectOptions{}); err == nil {
				v.Driver, v.DriverOpts, v.Labels = vi.Volume.Driver, vi.Volume.Options, vi.Volume.Labels
			} else {
				return nil, fmt.Errorf("volume %s: %w", mp.Name, err)
			}
			size, err := b.archiveOne(ctx, c.ID, mp.Destination, filepath.Join(dir, v.File))
			if err != nil {
				return nil, fmt.Errorf("volume %s at %s:%s: %w", mp.Name, v.Member, mp.Destination, err)
			}
			v.Size = size
			out = append(out, v)
			backends.Progress(ctx, "archived volume %s", mp.Name)
		}
	}
	return out, nil
}

// namedVolumes lists the volume names a host config asks for (Binds "name:/path" and Mounts).
func namedVolumes(hc *container.HostConfig) map[string]bool {
	out := map[string]bool{}
	if hc == nil {
		return out
	}
	for _, bind := range hc.Binds {
		src, _, ok := strings.Cut(bind, ":")
		if ok && !strings.HasPrefix(src, "/") {
			out[src] = true
		}
	}
	for _, m := range hc.Mounts {
		if m.Type == mount.TypeVolume && m.Source != "" {
			out[m.Source] = true
		}
	}
	return out
}

// archiveOne copies a directory out of a container into file, dropping the top-level directory
// name so the archive extracts into any mount point.
func (b *Backend) archiveOne(ctx context.Context, containerID, dir, file string) (int64, error) {
	res, err := b.cli.CopyFromContainer(ctx, containerID, client.CopyFromContainerOptions{SourcePath: dir})
	if err != nil {
		return 0, err
	}
	defer res.Content.Close()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: f}
	err = rebaseTar(res.Content, cw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return cw.n, err
}

// rebaseTar rewrites "base/x" entries to "x" and "base/" to "./" (keeping the root's mode and owner).
func rebaseTar(r io.Reader, w io.Writer) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		_, rest, _ := strings.Cut(strings.TrimSuffix(h.Name, "/"), "/")
		if rest == "" {
			rest = "."
		}
		if h.Typeflag == tar.TypeDir {
			rest += "/"
		}
		if h.Typeflag == tar.TypeLink {
			_, h.Linkname, _ = strings.Cut(h.Linkname, "/")
		}
		h.Name = rest
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	return tw.Close()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// startOrder sorts members so that every member comes after the services it depends on
// (com.docker.compose.depends_on, plus network/ipc/pid "container:" references); ties and cycles
// fall back to service name order.
func startOrder(ms []memberRecipe) []memberRecipe {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Service != ms[j].Service {
			return ms[i].Service < ms[j].Service
		}
		return ms[i].Name < ms[j].Name
	})
	byID := map[string]string{}
	for _, m := range ms {
		byID[m.OldID] = m.Service
		byID[m.Name] = m.Service
	}
	deps := make([]map[string]bool, len(ms))
	for i, m := range ms {
		deps[i] = map[string]bool{}
		for _, d := range dependsOn(m.Config.Labels[LabelDependsOn]) {
			deps[i][d] = true
		}
		for _, ref := range containerRefs(m.HostConfig) {
			if s, ok := byID[ref]; ok {
				deps[i][s] = true
			}
		}
		delete(deps[i], m.Service)
	}
	out := make([]memberRecipe, 0, len(ms))
	placed := make([]bool, len(ms))
	started := map[string]int{} // service → members placed
	total := map[string]int{}
	for _, m := range ms {
		total[m.Service]++
	}
	for len(out) < len(ms) {
		progressed := false
		for i, m := range ms {
			if placed[i] {
				continue
			}
			ready := true
			for d := range deps[i] {
				if total[d] > 0 && started[d] < total[d] {
					ready = false
				}
			}
			if ready {
				out, placed[i], progressed = append(out, m), true, true
				started[m.Service]++
			}
		}
		if !progressed { // a cycle: place the first remaining member and go on
			for i, m := range ms {
				if !placed[i] {
					out, placed[i] = append(out, m), true
					started[m.Service]++
					break
				}
			}
		}
	}
	return out
}

// dependsOn parses compose's "svc:condition:restart,svc2:…" label (v1 wrote plain "svc,svc2").
func dependsOn(label string) []string {
	var out []string
	for _, part := range strings.Split(label, ",") {
		if svc, _, _ := strings.Cut(strings.TrimSpace(part), ":"); svc != "" {
			out = append(out, svc)
		}
	}
	return out
}

// containerRefs lists the containers a host config shares namespaces with.
func containerRefs(hc *container.HostConfig) []string {
	if hc == nil {
		return nil
	}
	var out []string
	for _, mode := range []string{string(hc.NetworkMode), string(hc.IpcMode), string(hc.PidMode)} {
		if ref, ok := strings.CutPrefix(mode, "container:"); ok {
			out = append(out, ref)
		}
	}
	return out
}

// Snapshots implements backends.Snapshotter: the sandbox's stored snapshots, oldest first.
func (b *Backend) Snapshots(ctx context.Context, sandboxID string) ([]backends.SnapshotInfo, error) {
	db, err := b.snapshotStore()
	if err != nil {
		return nil, err
	}
	recs, err := db.Snapshots(sandboxID)
	if err != nil {
		return nil, err
	}
	out := make([]backends.SnapshotInfo, 0, len(recs))
	for _, r := range recs {
		if r.Backend == b.Name() {
			out = append(out, r.Info)
		}
	}
	return out, nil
}

// loadSnapshot reads one record and its recipe.
func (b *Backend) loadSnapshot(sandboxID, snapshotID string) (backends.SnapshotStore, backends.SnapshotRecord, snapshotData, error) {
	var data snapshotData
	db, err := b.snapshotStore()
	if err != nil {
		return nil, backends.SnapshotRecord{}, data, err
	}
	rec, ok, err := db.Snapshot(sandboxID, snapshotID)
	if err != nil {
		return nil, rec, data, err
	}
	if !ok {
		return nil, rec, data, fmt.Errorf("%w: %s has no snapshot %q", backends.ErrSnapshotNotFound, sandboxID, snapshotID)
	}
	if err := json.Unmarshal(rec.Data, &data); err != nil {
		return nil, rec, data, fmt.Errorf("snapshot %s of %s: corrupt record: %w", snapshotID, sandboxID, err)
	}
	return db, rec, data, nil
}

// DeleteSnapshot implements backends.Snapshotter: it removes the snapshot's images, its volume
// archives and its record. Images still used by the sandbox's members (after a revert to this
// snapshot) cannot be removed; the snapshot is then kept and the error says why.
func (b *Backend) DeleteSnapshot(ctx context.Context, sandboxID, snapshotID string) error {
	if _, _, _, err := b.loadSnapshot(sandboxID, snapshotID); err != nil {
		return err
	}
	if err := backends.RecordPlan(ctx, deletePlan{SnapshotID: snapshotID}); err != nil {
		return fmt.Errorf("delete snapshot %s: nothing changed: %w", snapshotID, err)
	}
	return b.deleteSnapshot(ctx, sandboxID, snapshotID)
}

// deleteSnapshot removes whatever is left of a snapshot: images, archives, record.
func (b *Backend) deleteSnapshot(ctx context.Context, sandboxID, snapshotID string) error {
	db, err := b.snapshotStore()
	if err != nil {
		return err
	}
	if err := b.removeSnapshotImagesCtx(ctx, snapshotID); err != nil {
		return b.wrap(fmt.Errorf("delete snapshot %s: %w", snapshotID, err))
	}
	if err := os.RemoveAll(db.ArchiveDir(snapshotID)); err != nil {
		return fmt.Errorf("delete snapshot %s: volume archives: %w", snapshotID, err)
	}
	return db.DeleteSnapshot(sandboxID, snapshotID)
}

func (b *Backend) removeSnapshotImages(snapshotID string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = b.removeSnapshotImagesCtx(ctx, snapshotID)
}

// removeSnapshotImagesCtx removes every image labelled with the snapshot ID.
func (b *Backend) removeSnapshotImagesCtx(ctx context.Context, snapshotID string) error {
	return b.removeImages(ctx, make(client.Filters).Add("label", LabelSnapshot+"="+snapshotID))
}

func (b *Backend) removeImages(ctx context.Context, f client.Filters) error {
	imgs, err := b.cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: f})
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(imgs.Items))
	for _, im := range imgs.Items {
		ids = append(ids, im.ID)
	}
	return b.removeImageIDs(ctx, ids)
}

func (b *Backend) removeImageIDs(ctx context.Context, ids []string) error {
	var errs []error
	for _, id := range ids {
		if _, err := b.cli.ImageRemove(ctx, id, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			if cerrdefs.IsConflict(err) {
				err = fmt.Errorf("image %.19s is still used by a container (revert to another snapshot or tear the sandbox down first): %w", id, err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// parallel runs f(0..n-1) concurrently and returns the errors joined.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

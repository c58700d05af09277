package docker

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// BenchmarkSnapshotVsRawCommit times Snapshot of a three-member sandbox against committing the
// same containers one by one with a bare ContainerCommit (pausing each, the engine default), and
// reports snapshot/raw as "ratio" (goal ≤ 1.1). Run with -benchtime=3x.
func BenchmarkSnapshotVsRawCommit(b *testing.B) {
	db, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	be, err := New(Endpoint{}, Options{Snapshots: db})
	if err != nil {
		b.Fatal(err)
	}
	dockertest.Engine(b)
	defer be.Close()
	project := "rk-bench-snap-" + dockertest.RunID
	dockertest.Project(b, project, dockertest.Service{Name: "a"}, dockertest.Service{Name: "b"}, dockertest.Service{Name: "c"})
	id := be.SandboxID(project)
	ctx := context.Background()
	cs, err := be.members(ctx, project)
	if err != nil {
		b.Fatal(err)
	}
	var raw, snap time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		start := time.Now()
		var ids []string
		for _, c := range cs {
			res, err := be.cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{
				Reference: fmt.Sprintf("rangekeeper-bench:%s-%d-%s", dockertest.RunID, i, c.ID[:12]),
				Config:    &container.Config{Labels: dockertest.Labels(nil)}})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, res.ID)
		}
		raw += time.Since(start)
		for _, im := range ids {
			_, _ = be.cli.ImageRemove(ctx, im, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		}
		b.StartTimer()
		start = time.Now()
		info, err := be.Snapshot(ctx, id, backends.SnapshotOptions{})
		if err != nil {
			b.Fatal(err)
		}
		snap += time.Since(start)
		b.StopTimer()
		if err := be.DeleteSnapshot(ctx, id, info.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(raw.Milliseconds())/float64(b.N), "raw-ms/op")
	b.ReportMetric(float64(snap.Milliseconds())/float64(b.N), "snapshot-ms/op")
	b.ReportMetric(float64(snap)/float64(raw), "ratio")
}

// benchSandboxes creates n one-member sandboxes (a busybox sleep container and a volume each)
// concurrently, and registers their removal in case a teardown fails.
func benchSandboxes(b *testing.B, be *Backend, prefix string, n int) []string {
	cli, img := dockertest.Engine(b), dockertest.Image(b)
	ids := make([]string, n)
	err := parallelLimit(n, 8, func(i int) error {
		project := fmt.Sprintf("%s%d-%s", prefix, i, dockertest.RunID)
		ids[i] = be.SandboxID(project)
		b.Cleanup(func() { dockertest.RemoveProject(cli, project) })
		ctx := context.Background()
		// No network per sandbox: the engine's default address pools hold about 30 bridges. A
		// compose-labelled named volume stands in for the project-level resource instead.
		vol := project + "_data"
		if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: vol,
			Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelVolume: "data"})}); err != nil {
			return err
		}
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: project + "-x-1",
			Config: &container.Config{Image: img, Cmd: []string{"sleep", "3600"}, StopSignal: "SIGKILL",
				Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelService: "x", LabelNumber: "1", LabelOneoff: "False"})},
			HostConfig: &container.HostConfig{NetworkMode: "none", Binds: []string{vol + ":/data"}}})
		if err != nil {
			return err
		}
		_, err = cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return ids
}

// BenchmarkTeardown50 tears down 50 sandboxes 16 at a time (as the action layer's bounded fan-out
// does) against one after another and reports parallel/sequential as "ratio" (goal ≤ 0.3). Run
// with -benchtime=1x: each iteration creates 100 containers.
func BenchmarkTeardown50(b *testing.B) {
	const n, parallelism = 50, 16
	db, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	be, err := New(Endpoint{}, Options{Snapshots: db})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	ctx := context.Background()
	var seq, par time.Duration
	for range b.N {
		b.StopTimer()
		ids := benchSandboxes(b, be, "rk-bench-seq", n)
		start := time.Now()
		for _, id := range ids {
			if err := be.Teardown(ctx, id, backends.TeardownOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		seq += time.Since(start)

		ids = benchSandboxes(b, be, "rk-bench-par", n)
		b.StartTimer()
		start = time.Now()
		if err := parallelLimit(len(ids), parallelism, func(i int) error {
			return be.Teardown(ctx, ids[i], backends.TeardownOptions{})
		}); err != nil {
			b.Fatal(err)
		}
		par += time.Since(start)
	}
	b.ReportMetric(seq.Seconds()/float64(b.N), "sequential-s/op")
	b.ReportMetric(par.Seconds()/float64(b.N), "parallel-s/op")
	b.ReportMetric(float64(par)/float64(seq), "ratio")
}

// parallelLimit runs f(0..n-1) with at most limit at once.
func parallelLimit(n, limit int, f func(i int) error) error {
	sem := make(chan struct{}, limit)
	return parallel(n, func(i int) error {
		sem <- struct{}{}
		defer func() { <-sem }()
		return f(i)
	})
}

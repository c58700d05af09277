package composeup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Counts are resources carrying one label.
type Counts struct {
	Containers int `json:"containers"`
	Networks   int `json:"networks"`
	Volumes    int `json:"volumes"`
}

// Zero reports whether nothing is counted.
func (c Counts) Zero() bool { return c.Containers+c.Networks+c.Volumes == 0 }

func (c Counts) String() string {
	return fmt.Sprintf("%d container(s), %d network(s), %d volume(s)", c.Containers, c.Networks, c.Volumes)
}

// Count counts the containers, networks and volumes carrying label ("key=value").
func Count(ctx context.Context, cli *client.Client, label string) (Counts, error) {
	f := make(client.Filters).Add("label", label)
	var c Counts
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return c, err
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return c, err
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return c, err
	}
	return Counts{Containers: len(cs.Items), Networks: len(ns.Items), Volumes: len(vs.Items)}, nil
}

// removeParallelism bounds concurrent removals (the engine serialises much of it anyway).
const removeParallelism = 4

// Down force-removes every container carrying label (with its anonymous volumes), then the
// networks and volumes carrying it. Resources without the label — external networks and
// volumes, anything of another project — are never touched. It returns what it removed and
// joins every failure into the error, after trying everything.
func Down(ctx context.Context, cli *client.Client, label string) (Counts, error) {
	f := make(client.Filters).Add("label", label)
	var removed Counts
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return removed, fmt.Errorf("list containers %s: %w", label, err)
	}
	// Containers, then networks, go a few at a time: force-removal waits for each container to
	// die, and a sandbox with its canaries has many of both.
	var mu sync.Mutex
	note := func(counter *int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		*counter++
	}
	inParallel(len(cs.Items), func(i int) {
		id := cs.Items[i].ID
		_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		switch {
		case err == nil || cerrdefs.IsNotFound(err) || strings.Contains(err.Error(), "already in progress"):
			note(&removed.Containers, nil) // "in progress": another remover (e.g. AutoRemove) is on it
		default:
			note(nil, fmt.Errorf("remove container %s: %w", shortID(id), err))
		}
	})
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list networks %s: %w", label, err))
	}
	inParallel(len(ns.Items), func(i int) {
		n := ns.Items[i]
		if err := removeNetwork(ctx, cli, n.ID); err != nil {
			note(nil, fmt.Errorf("remove network %s: %w", n.Name, err))
			return
		}
		note(&removed.Networks, nil)
	})
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list volumes %s: %w", label, err))
	}
	for _, v := range vs.Items {
		if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume %s: %w", v.Name, err))
			continue
		}
		removed.Volumes++
	}
	return removed, errors.Join(errs...)
}

// inParallel runs fn(0..n-1) at most removeParallelism at a time.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, removeParallelism)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// removeNetwork retries briefly: an endpoint of a just-removed container can linger for a moment.
func removeNetwork(ctx context.Context, cli *client.Client, id string) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		_, err = cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
		if err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		if !strings.Contains(err.Error(), "active endpoints") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Stats samples CPU and memory of every member once (stream=false with the engine's previous
// sample, so CPU percent is a real delta). Members are sampled in parallel: the engine takes about
// a second per sample.
func (b *Backend) Stats(ctx context.Context, sandboxID string) ([]backends.MemberStats, error) {
	project, err := b.ProjectOf(sandboxID)
	if err != nil {
		return nil, err
	}
	cs, err := b.members(ctx, project)
	if err != nil {
		return nil, err
	}
	out := make([]backends.MemberStats, len(cs))
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		out[i] = backends.MemberStats{Member: containerName(c), Running: c.State == container.StateRunning}
		if !out[i].Running {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.sampleStats(ctx, c.ID, &out[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return out, fmt.Errorf("%s: stats of %s: %w", b.Name(), out[i].Member, err)
		}
	}
	return out, nil
}

func (b *Backend) sampleStats(ctx context.Context, id string, ms *backends.MemberStats) error {
	res, err := b.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{Stream: false, IncludePreviousSample: true})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return err
	}
	ms.CPUPercent = cpuPercent(st)
	ms.MemBytes = st.MemoryStats.Usage
	if cache, ok := st.MemoryStats.Stats["inactive_file"]; ok && cache < ms.MemBytes {
		ms.MemBytes -= cache // what `docker stats` shows: usage without reclaimable page cache
	}
	ms.MemLimit = st.MemoryStats.Limit
	return nil
}

// cpuPercent is docker stats' formula: container CPU delta over system CPU delta, times CPUs.
func cpuPercent(st container.StatsResponse) float64 {
	cpuDelta := float64(st.CPUStats.CPUUsage.TotalUsage) - float64(st.PreCPUStats.CPUUsage.TotalUsage)
	sysDelta := float64(st.CPUStats.SystemUsage) - float64(st.PreCPUStats.SystemUsage)
	cpus := float64(st.CPUStats.OnlineCPUs)
	if cpus == 0 {
		cpus = float64(len(st.CPUStats.CPUUsage.PercpuUsage))
	}
	if sysDelta <= 0 || cpuDelta < 0 || cpus == 0 {
		return 0
	}
	return cpuDelta / sysDelta * cpus * 100
}

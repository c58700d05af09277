package app

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
)

// lazyProber is the probe pipeline with its binary (megabytes) read at the first probe instead
// of before the workbench's first frame. Whether probing is
// available is still decided at start, by probe.Locate's stat.
type lazyProber struct {
	path string
	make func(bin []byte) *probe.Pipeline

	once sync.Once
	p    *probe.Pipeline
	err  error
}

func (l *lazyProber) load() (*probe.Pipeline, error) {
	l.once.Do(func() {
		fi, err := os.Stat(l.path)
		if err == nil && fi.Size() > probe.MaxBinarySize {
			err = fmt.Errorf("probe binary %s is %d bytes, larger than %d: not the probe", l.path, fi.Size(), probe.MaxBinarySize)
		}
		var bin []byte
		if err == nil {
			bin, err = os.ReadFile(l.path)
		}
		if err != nil {
			l.err = fmt.Errorf("probe binary %s: %w", l.path, err)
			return
		}
		l.p = l.make(bin)
	})
	return l.p, l.err
}

// Probe reads the binary once, then runs the pipeline.
func (l *lazyProber) Probe(ctx context.Context, b backends.Backend, sb backends.Sandbox, req probe.Request) (probe.Report, error) {
	p, err := l.load()
	if err != nil {
		return probe.Report{}, err
	}
	return p.Probe(ctx, b, sb, req)
}

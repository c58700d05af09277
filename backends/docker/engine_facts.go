package docker

import (
	"context"
	"sort"
	"strings"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/spec/advisory"
)

// EngineFacts is what live posture and the probe's verdicts need from the engine itself: the
// runtimes it offers (CMP-H26) and its component versions (runc, containerd, the engine), each
// with the distribution build string where the engine reports one (GitCommit of a Debian
// package is "1.1.5+ds1-1+deb12u1").
type EngineFacts struct {
	Version        string
	Runtimes       []string
	DefaultRuntime string
	CgroupVersion  string               // "1" or "2"
	Components     map[string]Component // lower-case name: "engine", "runc", "containerd", "docker-init"
}

// Component is one engine component's version as the engine reports it.
type Component struct {
	Version   string
	GitCommit string
}

// EngineFacts reads (once per backend: an engine's runtimes and versions change only with a
// daemon restart, which also ends the watch that re-lists) the engine's runtimes and component
// versions.
func (b *Backend) EngineFacts(ctx context.Context) (EngineFacts, error) {
	b.factsMu.Lock()
	defer b.factsMu.Unlock()
	if b.facts != nil {
		return *b.facts, nil
	}
	info, err := b.cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return EngineFacts{}, b.wrap(err)
	}
	ver, err := b.cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return EngineFacts{}, b.wrap(err)
	}
	f := EngineFacts{Version: ver.Version, DefaultRuntime: info.Info.DefaultRuntime, CgroupVersion: info.Info.CgroupVersion, Components: map[string]Component{}}
	for name := range info.Info.Runtimes {
		f.Runtimes = append(f.Runtimes, name)
	}
	sort.Strings(f.Runtimes)
	for _, c := range ver.Components {
		f.Components[strings.ToLower(c.Name)] = Component{Version: c.Version, GitCommit: c.Details["GitCommit"]}
	}
	b.facts = &f
	return f, nil
}

// ComponentVersion is a component's most specific version: the distribution package version
// where the engine reports one in GitCommit, else its version ("" when not reported).
func (f EngineFacts) ComponentVersion(name string) string {
	c := f.Components[strings.ToLower(name)]
	return advisory.ComponentVersion(c.Version, c.GitCommit)
}

// DefaultCgroupns is the cgroup namespace a container gets when it asks for none: the host's on
// cgroup v1 engines, a private one on v2 (moby's default-cgroupns-mode); "" when unknown.
func (f EngineFacts) DefaultCgroupns() string {
	switch f.CgroupVersion {
	case "1":
		return "host"
	case "2":
		return "private"
	}
	return ""
}

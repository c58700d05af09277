// Package dockerstage is verify's Docker Compose driver: it stands a compose spec up on the
// local engine with composeup, pointed at canaries of its own — an "outside" listener and DNS
// resolver on a separate network (published on that network's host address, so only a sandbox
// whose traffic is forwarded off its own networks reaches them), listeners on the host side of
// the sandbox's bridges and inside each scorer's network namespace — proves with two control
// containers that the outside canary tells routed from isolated networks, collects the
// canaries' logs and removes everything by the run label.
package dockerstage

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/composeup"
	"github.com/rangekeeper/rangekeeper/verify"
)

// Labels verify puts on its canaries and controls besides the run label.
const (
	LabelRole        = "dev.rangekeeper.verify.role"   // canary-outside, canary-hostgw, canary-scorer, control
	LabelCanaryImage = "dev.rangekeeper.verify.canary" // on the cached canary image: its binary's hash
)

// DefaultImageRepo is the canary image's repository; its tag is the binary's hash.
const DefaultImageRepo = "rangekeeper-verify-canary"

// Options configure the driver.
type Options struct {
	// Backend is the Docker backend of the engine to verify on; the default Prober execs the
	// probe through it.
	Backend *docker.Backend
	// Canary returns the static rangekeeper-canary binary (canary.Binary); it is read when the
	// first run stands up, so a bad spec is reported even where the binary is missing.
	Canary func() ([]byte, error)
	// Labels are added to every container, network and volume (tests add theirs).
	Labels map[string]string
	// ImageLabels are added to the canary image verify builds (tests add theirs so it is swept).
	ImageLabels map[string]string
	// ImageRepo names the canary image's repository (default DefaultImageRepo). Tests give each
	// test process its own, so no process uses an image another one built and removes at exit.
	ImageRepo string
	// Pull lets the engine pull missing spec images; by default they must be present.
	Pull bool
}

// Driver stands compose specs up on one Docker Engine.
type Driver struct {
	o   Options
	cli *client.Client
}

var _ verify.Driver = (*Driver)(nil)

// New returns a driver for o.Backend's engine.
func New(o Options) (*Driver, error) {
	if o.Backend == nil {
		return nil, errors.New("dockerstage: no Docker backend")
	}
	if o.Canary == nil {
		return nil, errors.New("dockerstage: no canary binary")
	}
	return &Driver{o: o, cli: o.Backend.Client()}, nil
}

// Name is the backend name (docker:<endpoint>).
func (d *Driver) Name() string { return d.o.Backend.Name() }

func runLabel(runID string) string { return verify.LabelRun + "=" + runID }

// labels are the run label plus the configured extra labels.
func (d *Driver) labels(runID string, extra map[string]string) map[string]string {
	l := map[string]string{verify.LabelRun: runID}
	for k, v := range d.o.Labels {
		l[k] = v
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// Teardown removes every container, network and volume carrying the run label, then counts
// what is left.
func (d *Driver) Teardown(ctx context.Context, runID string) (removed, remaining verify.Counts, err error) {
	r, err := composeup.Down(ctx, d.cli, runLabel(runID))
	removed = verify.Counts(r)
	left, cerr := composeup.Count(ctx, d.cli, runLabel(runID))
	if cerr != nil {
		return removed, remaining, errors.Join(err, fmt.Errorf("count what is left: %w", cerr))
	}
	return removed, verify.Counts(left), err
}

// RemoveCommand is `rangekeeper verify --down RUN`, with the docker CLI equivalent.
func (d *Driver) RemoveCommand(runID string) string {
	l := runLabel(runID)
	return fmt.Sprintf("rangekeeper verify --down %s   (or: docker rm -f $(docker ps -aq --filter label=%s); docker network rm $(docker network ls -q --filter label=%s); docker volume rm $(docker volume ls -q --filter label=%s))", runID, l, l, l)
}

// Runs lists the run IDs that still have a container, network or volume on the engine (left by
// --keep, or by a process killed before it could tear down).
func (d *Driver) Runs(ctx context.Context) ([]string, error) {
	f := make(client.Filters).Add("label", verify.LabelRun)
	seen := map[string]bool{}
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Items {
		seen[c.Labels[verify.LabelRun]] = true
	}
	ns, err := d.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, n := range ns.Items {
		seen[n.Labels[verify.LabelRun]] = true
	}
	vs, err := d.cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, v := range vs.Items {
		seen[v.Labels[verify.LabelRun]] = true
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		if id != "" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

// RemoveCanaryImages removes the cached canary images (every version).
func (d *Driver) RemoveCanaryImages(ctx context.Context) (int, error) {
	is, err := d.cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: make(client.Filters).Add("label", LabelCanaryImage)})
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, i := range is.Items {
		if _, err := d.cli.ImageRemove(ctx, i.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

package dockerstage

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/composeup"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// Roles of verify's own containers.
const (
	roleOutside = "canary-outside"
	roleHostGW  = "canary-hostgw"
	roleScorer  = "canary-scorer"
	roleControl = "control"
)

// Ports inside the outside canary: the control's listener, then one per service.
const (
	controlPort    = 10000
	firstEgress    = 10001
	dnsInnerPort   = 5353
	controlTimeout = "2s"
)

// session is one stand-up.
type session struct {
	d       *Driver
	req     verify.LoadRequest
	project *types.Project
	plan    verify.Plan
	zone    string

	image      string
	outsideNet string
	outsideGW  netip.Addr
	egressPort map[string]string // service → published host port on outsideGW
	controls   [2]canaryRun      // routed, internal
	stack      *composeup.Stack

	mu       sync.Mutex
	canaries []canaryRun
	notes    []string
}

// Notes are what the session learned while running (verify.Noter).
func (s *session) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

func (s *session) Plan() verify.Plan { return s.plan }
func (s *session) SandboxID() string { return s.d.o.Backend.SandboxID(s.project.Name) }

// Up builds (or reuses) the canary image, creates the outside network with its canary and the
// two controls, then stands the sandbox up with every resolver pointed at the DNS canary.
func (s *session) Up(ctx context.Context) error {
	img, err := s.d.canaryImage(ctx)
	if err != nil {
		return err
	}
	s.image = img
	if err := s.startOutside(ctx); err != nil {
		return err
	}
	st, err := composeup.Up(ctx, s.d.cli, s.project, composeup.Options{
		Labels: s.d.labels(s.req.RunID, nil), DNS: []netip.Addr{s.outsideGW}, Pull: s.d.o.Pull,
	})
	s.stack = st
	if err != nil {
		return fmt.Errorf("stand up %s: %w", s.project.Name, err)
	}
	// The controls start only once every sandbox network exists, and run while the sandbox
	// settles: on Docker 20.10 every bridge network creation deletes and re-inserts FORWARD's
	// jump to DOCKER-ISOLATION-STAGE-1 (libnetwork's EnsureJumpRule), and a connection from an
	// internal network opened between the two iptables calls reaches a published port. Nothing
	// of ours creates networks while they run; other processes still can, hence the repeat in
	// Wait and verify.confirmEgress for the sandbox's own contacts.
	return s.startControls(ctx)
}

func (s *session) createNetwork(ctx context.Context, name, role string, internal bool) (netip.Addr, error) {
	_, err := s.d.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Internal: internal,
		Labels: s.d.labels(s.req.RunID, map[string]string{LabelRole: role})})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("create network %s: %w", name, err)
	}
	ins, err := s.d.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("inspect network %s: %w", name, err)
	}
	for _, c := range ins.Network.IPAM.Config {
		if c.Gateway.Is4() {
			return c.Gateway, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("network %s has no IPv4 gateway", name)
}

// startOutside runs the outside canary on its own network. Its listeners are published only on
// that network's host address: a sandbox reaches them only if the engine forwards its traffic
// off its own networks — the path internet egress takes — and an internal network's traffic
// is dropped on the way, as it would be to the internet.
func (s *session) startOutside(ctx context.Context) error {
	s.outsideNet = s.project.Name + "_rkv-outside"
	gw, err := s.createNetwork(ctx, s.outsideNet, roleOutside, false)
	if err != nil {
		return err
	}
	s.outsideGW = gw
	args := []string{"serve", "--tcp", fmt.Sprintf("0.0.0.0:%d=control", controlPort)}
	exposed := network.PortSet{}
	ports := network.PortMap{}
	publish := func(port int, proto, hostPort string) {
		p := network.MustParsePort(fmt.Sprintf("%d/%s", port, proto))
		exposed[p] = struct{}{}
		ports[p] = []network.PortBinding{{HostIP: gw, HostPort: hostPort}}
	}
	publish(controlPort, "tcp", "")
	for i, svc := range s.plan.Services {
		port := firstEgress + i
		args = append(args, "--tcp", fmt.Sprintf("0.0.0.0:%d=%s", port, canary.TagOf(verify.TargetEgress, svc.Name)))
		publish(port, "tcp", "")
	}
	args = append(args, "--dns", fmt.Sprintf("0.0.0.0:%d", dnsInnerPort), "--zone", s.zone)
	publish(dnsInnerPort, "udp", "53")
	publish(dnsInnerPort, "tcp", "53")
	c, err := s.startCanary(ctx, roleOutside, s.project.Name+"-rkv-outside", args,
		&container.HostConfig{NetworkMode: container.NetworkMode(s.outsideNet), PortBindings: ports}, nil, exposed)
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			return fmt.Errorf("%w (the DNS canary publishes %s:53; something on this host holds port 53 on every address)", err, gw)
		}
		return err
	}
	if err := s.awaitReady(ctx, c); err != nil {
		return err
	}
	ins, err := s.d.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
	if err != nil {
		return err
	}
	s.egressPort = map[string]string{}
	for i, svc := range s.plan.Services {
		b := ins.Container.NetworkSettings.Ports[network.MustParsePort(fmt.Sprintf("%d/tcp", firstEgress+i))]
		if len(b) == 0 {
			return fmt.Errorf("outside canary: port %d/tcp was not published", firstEgress+i)
		}
		s.egressPort[svc.Name] = b[0].HostPort
	}
	b := ins.Container.NetworkSettings.Ports[network.MustParsePort(fmt.Sprintf("%d/tcp", controlPort))]
	if len(b) == 0 {
		return errors.New("outside canary: the control port was not published")
	}
	s.egressPort[""] = b[0].HostPort
	return nil
}

// startControls runs two one-shot containers against the outside canary: one on a routed
// network (must reach it), one on an internal network (must not). Together they prove on this
// engine that "reached" means forwarded off the sandbox's networks and "not reached" means
// isolated; without them a blind canary would pass every spec.
func (s *session) startControls(ctx context.Context) error {
	for i, internal := range []bool{false, true} {
		name := s.project.Name + "_rkv-control-" + controlSuffix[i]
		if _, err := s.createNetwork(ctx, name, roleControl, internal); err != nil {
			return err
		}
		c, err := s.runControl(ctx, i, 0)
		if err != nil {
			return err
		}
		s.controls[i] = c
	}
	return nil
}

var controlSuffix = [2]string{"routed", "internal"}

// runControl starts control i (routed or internal) for the attempt-th time.
func (s *session) runControl(ctx context.Context, i, attempt int) (canaryRun, error) {
	args := []string{"check", "--dial", netip.AddrPortFrom(s.outsideGW, mustPort(s.egressPort[""])).String(),
		"--dns", netip.AddrPortFrom(s.outsideGW, 53).String(), "--name", "control." + s.zone, "--timeout", controlTimeout}
	name := fmt.Sprintf("%s-rkv-control-%s-%d", s.project.Name, controlSuffix[i], attempt)
	return s.startCanary(ctx, roleControl, name, args,
		&container.HostConfig{NetworkMode: container.NetworkMode(s.project.Name + "_rkv-control-" + controlSuffix[i])}, nil, nil)
}

func mustPort(s string) uint16 {
	n, _ := strconv.Atoi(s)
	return uint16(n)
}

// Wait waits for the sandbox and then judges the controls. An internal control that reaches
// the canary is run once more before verify gives up (see Up), and the run says so.
func (s *session) Wait(ctx context.Context) error {
	if err := composeup.Wait(ctx, s.d.cli, s.stack); err != nil {
		return err
	}
	for i, c := range s.controls {
		routed := i == 0
		for attempt := 0; ; attempt++ {
			ev, err := s.awaitExit(ctx, c)
			if err != nil {
				return err
			}
			dial, lookup := outcome(ev, canary.KindDial), outcome(ev, canary.KindLookup)
			switch {
			case routed && (dial == nil || !dial.OK || lookup == nil || !lookup.OK):
				return fmt.Errorf("canary control: a container on a routed network could not reach the outside canary (%s; %s); "+
					"on this engine verify cannot tell egress from isolation (userland proxy disabled, or a host firewall on the bridges?)", describe(dial), describe(lookup))
			case !routed && (dial == nil || dial.OK || lookup == nil || lookup.OK):
				if attempt == 0 {
					s.mu.Lock()
					s.notes = append(s.notes, fmt.Sprintf("the internal control reached the outside canary once (%s; %s) and was repeated", describe(dial), describe(lookup)))
					s.mu.Unlock()
					if c, err = s.runControl(ctx, i, attempt+1); err != nil {
						return err
					}
					continue
				}
				return fmt.Errorf("canary control: a container on an internal network reached the outside canary twice (%s; %s); "+
					"on this engine verify cannot tell egress from isolation", describe(dial), describe(lookup))
			}
			break
		}
	}
	return nil
}

func outcome(ev []canary.Event, kind string) *canary.Event {
	for i := range ev {
		if ev[i].Kind == kind {
			return &ev[i]
		}
	}
	return nil
}

func describe(e *canary.Event) string {
	if e == nil {
		return "no result"
	}
	what := e.Addr
	if e.Name != "" {
		what = e.Name + " via " + e.Addr
	}
	if e.OK {
		return what + " ok"
	}
	return what + ": " + e.Detail
}

// Evidence reads every canary's log (the controls' are not evidence about the sandbox).
func (s *session) Evidence(ctx context.Context) ([]canary.Event, error) {
	s.mu.Lock()
	cs := append([]canaryRun(nil), s.canaries...)
	s.mu.Unlock()
	var all []canary.Event
	var errs []error
	for _, c := range cs {
		if c.role == roleControl {
			continue
		}
		ev, err := s.events(ctx, c.id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
			continue
		}
		all = append(all, ev...)
	}
	return all, errors.Join(errs...)
}

// Versions reads the engine and runc versions, which the probe cannot see from inside.
func (s *session) Versions(ctx context.Context) verdict.Versions {
	v, err := s.d.cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return verdict.Versions{}
	}
	out := verdict.Versions{Engine: v.Version}
	for _, c := range v.Components {
		if strings.EqualFold(c.Name, "runc") {
			out.Runc = c.Version
		}
	}
	return out
}

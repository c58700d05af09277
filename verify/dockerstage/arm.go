package dockerstage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sort"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// netAttachment is one network a member's network namespace is on.
type netAttachment struct {
	name    string
	ip      netip.Addr
	gateway netip.Addr
	owned   bool // created by this run (a bridge whose host side verify may listen on)
}

// netns describes the network namespace a member's container runs in.
type netns struct {
	owner string // container ID owning the namespace
	mode  string // host, none, or "" for bridge networks
	nets  []netAttachment
}

// namespaceOf follows network_mode container:/service: chains to the namespace owner.
func (s *session) namespaceOf(ctx context.Context, id string) (netns, error) {
	owned := map[string]bool{}
	for _, n := range s.stack.Networks {
		if !n.External {
			owned[n.Name] = true
		}
	}
	for hop := 0; hop < 8; hop++ {
		res, err := s.d.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil {
			return netns{}, err
		}
		c := res.Container
		mode := c.HostConfig.NetworkMode
		if mode.IsContainer() {
			id = mode.ConnectedContainer()
			continue
		}
		ns := netns{owner: c.ID}
		switch {
		case mode.IsHost():
			ns.mode = "host"
		case mode.IsNone():
			ns.mode = "none"
		}
		names := make([]string, 0, len(c.NetworkSettings.Networks))
		for name := range c.NetworkSettings.Networks {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ep := c.NetworkSettings.Networks[name]
			ns.nets = append(ns.nets, netAttachment{name: name, ip: ep.IPAddress, gateway: ep.Gateway, owned: owned[name]})
		}
		return ns, nil
	}
	return netns{}, fmt.Errorf("network_mode chain too long from %s", id)
}

// firstContainer is a service's first container ID.
func (s *session) firstContainer(service string) (string, error) {
	cs := s.stack.Service(service)
	if len(cs) == 0 {
		return "", fmt.Errorf("service %s has no container", service)
	}
	return cs[0].ID, nil
}

// Arm plants the canaries that need the running sandbox and lists each member's targets.
func (s *session) Arm(ctx context.Context, req verify.ArmRequest) (map[string]verify.MemberTargets, error) {
	spaces := map[string]netns{}
	for _, svc := range append(append([]string{}, req.Members...), req.Scorers...) {
		if _, ok := spaces[svc]; ok {
			continue
		}
		id, err := s.firstContainer(svc)
		if err != nil {
			return nil, err
		}
		ns, err := s.namespaceOf(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("inspect %s: %w", svc, err)
		}
		spaces[svc] = ns
	}
	out := map[string]verify.MemberTargets{}
	for i, m := range req.Members {
		mt := verify.MemberTargets{Targets: []verify.Target{{
			Kind: verify.TargetEgress, Addr: netip.AddrPortFrom(s.outsideGW, mustPort(s.egressPort[m])).String(),
			Tag:  canary.TagOf(verify.TargetEgress, m),
			What: fmt.Sprintf("verify's outside canary (%s:%s, published on network %s)", s.outsideGW, s.egressPort[m], s.outsideNet),
		}}}
		switch spaces[m].mode {
		case "host":
			mt.NoDNS = m + " uses the host's network namespace and resolvers; verify sends no canary name there"
		case "none":
			mt.NoDNS = m + " has no network"
		default:
			label := fmt.Sprintf("m%d", i)
			mt.DNSName = "*." + label + "." + s.zone
			mt.DNSSuffix = "." + label + "." + s.zone
		}
		out[m] = mt
	}
	if err := s.armHostGW(ctx, req.Members, spaces, out); err != nil {
		return nil, err
	}
	for _, sc := range req.Scorers {
		if err := s.armScorer(ctx, sc, spaces[sc], req.Members, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// randomBase picks a port range for listeners that share a namespace with others (the host, a
// scorer); a clash is retried with another base.
func randomBase() int { return 20000 + rand.IntN(40000) }

// startListening starts a canary whose listeners start at a random base port, retrying with
// another base when a port is taken, and returns the base it is listening at.
func (s *session) startListening(ctx context.Context, role, name string, hc func() *container.HostConfig, args func(base int) []string) (int, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		base := randomBase()
		c, err := s.startCanary(ctx, role, fmt.Sprintf("%s-%d", name, attempt), append([]string{"serve"}, args(base)...), hc(), nil, nil)
		if err == nil {
			err = s.awaitReady(ctx, c)
		}
		if err == nil {
			return base, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return 0, fmt.Errorf("%s: %w", role, lastErr)
}

// armHostGW runs one canary in the host's network namespace listening on the host side of every
// bridge this run created that a member is on — never on an address verify did not create.
func (s *session) armHostGW(ctx context.Context, members []string, spaces map[string]netns, out map[string]verify.MemberTargets) error {
	type want struct {
		member string
		index  int
		gw     netip.Addr
		net    string
	}
	var wants []want
	for i, m := range members {
		for _, a := range spaces[m].nets {
			if a.owned && a.gateway.IsValid() {
				wants = append(wants, want{m, i, a.gateway, a.name})
			}
		}
	}
	if len(wants) == 0 {
		return nil
	}
	addr := func(w want, base int) string { return netip.AddrPortFrom(w.gw, uint16(base+w.index)).String() }
	base, err := s.startListening(ctx, roleHostGW, s.project.Name+"-rkv-hostgw",
		func() *container.HostConfig { return &container.HostConfig{NetworkMode: "host"} },
		func(base int) []string {
			var args []string
			seen := map[string]bool{}
			for _, w := range wants {
				if a := addr(w, base); !seen[a] {
					seen[a] = true
					args = append(args, "--tcp", a+"="+canary.TagOf(verify.TargetHostGW, w.member))
				}
			}
			return args
		})
	if err != nil {
		return err
	}
	for _, w := range wants {
		mt := out[w.member]
		mt.Targets = append(mt.Targets, verify.Target{Kind: verify.TargetHostGW, Addr: addr(w, base), Tag: canary.TagOf(verify.TargetHostGW, w.member),
			What: fmt.Sprintf("verify's listener on the host side of network %s (%s)", w.net, w.gw)})
		out[w.member] = mt
	}
	return nil
}

// armScorer runs a canary inside the scorer's network namespace, with one listener per member,
// and targets every address of the scorer plus its service name.
func (s *session) armScorer(ctx context.Context, scorer string, ns netns, members []string, out map[string]verify.MemberTargets) error {
	if ns.mode == "host" {
		// Listening there would open a port on the machine's own interfaces.
		return nil
	}
	tag := func(m string) string { return canary.TagOf(verify.TargetScorer+":"+scorer, m) }
	base, err := s.startListening(ctx, roleScorer, s.project.Name+"-rkv-scorer-"+scorer,
		func() *container.HostConfig {
			return &container.HostConfig{NetworkMode: container.NetworkMode("container:" + ns.owner)}
		},
		func(base int) []string {
			var args []string
			for i, m := range members {
				args = append(args, "--tcp", fmt.Sprintf("0.0.0.0:%d=%s", base+i, tag(m)))
			}
			return args
		})
	if err != nil {
		return fmt.Errorf("in %s: %w", scorer, err)
	}
	for i, m := range members {
		if m == scorer {
			continue // the scorer reaching its own namespace proves nothing
		}
		mt := out[m]
		port := uint16(base + i)
		for _, a := range ns.nets {
			if a.ip.IsValid() {
				mt.Targets = append(mt.Targets, verify.Target{Kind: verify.TargetScorer, Scorer: scorer, Tag: tag(m),
					Addr: netip.AddrPortFrom(a.ip, port).String(), What: fmt.Sprintf("scorer %q at %s (network %s)", scorer, a.ip, a.name)})
			}
		}
		mt.Targets = append(mt.Targets, verify.Target{Kind: verify.TargetScorer, Scorer: scorer, Tag: tag(m),
			Addr: fmt.Sprintf("%s:%d", scorer, port), What: fmt.Sprintf("scorer %q by name", scorer)})
		out[m] = mt
	}
	return nil
}

package spec

import (
	"fmt"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Compose network-axis rules (hardening.md §1.3).

var (
	modelHostRE = regexp.MustCompile(`(?i)(openai|anthropic|googleapis|generativelanguage|huggingface|mistral|cohere|ollama|bedrock|scor|grader|ledger)`)
	proxyKeys   = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}
)

// dockerVulnerableDNS reports whether an engine version has the internal-network DNS leak
// (CVE-2024-29018: fixed in 26.0.0, 25.0.4, 23.0.11; 25.0.0-25.0.3 also resolved external names).
func dockerVulnerableDNS(v string) (bool, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(strings.SplitN(v, "-", 2)[0], ".", 3)
	if len(parts) < 2 {
		return false, false
	}
	nums := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false, false
		}
		nums[i] = n
	}
	major, minor, patch := nums[0], nums[1], nums[2]
	switch {
	case major < 23:
		return true, true
	case major == 23:
		return minor == 0 && patch < 11, true
	case major == 24:
		return true, true
	case major == 25:
		return minor == 0 && patch < 4, true
	}
	return false, true
}

func isPrivateResolver(s string) bool {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return true // a name: cannot judge, assume in-range
	}
	return a.IsPrivate() && !a.IsLoopback()
}

func init() {
	register(
		ruleDef{Rule: cr("CMP-N01", "Host network namespace", crit, axN,
			"network_mode: host puts the service in the host's network namespace (host loopback services, metadata route, no internal network)",
			"remove network_mode: host; use network_mode: none or an internal network"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					if c.compose.networkMode(n) == "host" {
						c.report("CMP-N01", svcPath(n, "network_mode"), 0, "service %q uses the host network namespace", n)
					}
					for _, net := range c.compose.serviceNetworks(n) {
						if c.compose.hostNetwork(net) {
							c.report("CMP-N01", P("networks", net), 0, "service %q joins network %q, which is the engine's host network", n, net)
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-N02", "Shared network namespace", med, axN,
			"network_mode service:/container: shares another container's loopback listeners and egress",
			"give the service its own network namespace on an internal network"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					nm := getString(s, "network_mode")
					for _, p := range []string{"service:", "container:"} {
						if t, ok := strings.CutPrefix(nm, p); ok {
							sev := med
							if !c.compose.agents[t] {
								sev = high
							}
							c.report("CMP-N02", svcPath(n, "network_mode"), sev, "service %q shares the network namespace of %q", n, t)
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-N03", "Agent on a non-internal network", high, axN,
			"the agent is attached to a network without internal: true (SNAT to the internet and a route to the host)",
			"put the agent on a network with internal: true, or set network_mode: none"),
			check: func(c *ctx) {
				for _, a := range c.compose.agentNames() {
					if c.compose.onDefaultBridge(a) {
						c.report("CMP-N03", svcPath(a, "network_mode"), 0, "agent service %q has network_mode: %s: the engine's default bridge, with internet egress and a route to the host", a, c.compose.networkMode(a))
						continue
					}
					via, owner := "", a
					if t := c.compose.sharedNamespaceOf(a); t != "" {
						via, owner = fmt.Sprintf(" (it shares the network namespace of %q)", t), t
						if c.compose.onDefaultBridge(t) {
							c.report("CMP-N03", svcPath(a, "network_mode"), 0, "agent service %q uses the network namespace of %q, which is on the engine's default bridge", a, t)
							continue
						}
					}
					for _, net := range c.compose.serviceNetworks(owner) {
						if c.compose.networkInternal(net) || c.compose.hostNetwork(net) {
							continue
						}
						p := svcPath(a, "networks", net)
						detail := "agent service %q is on network %q, which is not internal" + via
						if owner != a {
							p = svcPath(a, "network_mode")
						} else if net == "default" && c.doc.pos[svcPath(a, "networks").key()] == (Pos{}) {
							p = svcPath(a)
							detail = "agent service %q is on Compose's implicit %q network, which has internet egress"
						}
						c.report("CMP-N03", p, 0, detail, a, net)
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N04", "Agent shares a network with the scoring plane", crit, axN,
			"the agent shares a network with a scorer/ledger/grader service and can reach the scoring plane",
			"put the scorer on its own network that the agent does not join"),
			check: func(c *ctx) {
				for _, a := range c.compose.agentNames() {
					mine := setOf(c.compose.serviceNetworks(a)...)
					for _, other := range c.compose.order {
						if c.compose.agents[other] || !c.compose.isScoring(other) {
							continue
						}
						for _, net := range c.compose.serviceNetworks(other) {
							if mine[net] {
								c.report("CMP-N04", svcPath(other, "networks", net), 0, "agent %q and %s %q share network %q", a, c.compose.roles[other], other, net)
							}
						}
						if nm := getString(c.compose.services[a], "network_mode"); nm == "service:"+other || nm == "container:"+other {
							c.report("CMP-N04", svcPath(a, "network_mode"), 0, "agent %q shares the network namespace of %s %q", a, c.compose.roles[other], other)
						}
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N05", "Dual-homed service next to the agent", high, axN,
			"a service on the agent's network is also on a non-internal network: a pivot to the outside (and Docker DNS keeps forwarding upstream)",
			"keep every service on the agent's network internal-only, or declare it as the egress proxy (x-rangekeeper.role: proxy)"),
			check: func(c *ctx) {
				agentNets := map[string]bool{}
				for _, a := range c.compose.agentNames() {
					for _, n := range c.compose.serviceNetworks(a) {
						agentNets[n] = true
					}
				}
				for _, n := range c.compose.order {
					if c.compose.agents[n] || c.compose.roles[n] == "proxy" {
						continue
					}
					nets := c.compose.serviceNetworks(n)
					shared, external := "", ""
					for _, net := range nets {
						if agentNets[net] {
							shared = net
						} else if !c.compose.networkInternal(net) {
							external = net
						}
					}
					if shared != "" && external != "" {
						c.report("CMP-N05", svcPath(n, "networks", external), 0, "service %q is on the agent's network %q and on non-internal network %q", n, shared, external)
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N06", "Internal network DNS leak on this engine", high, axN,
			"the agent relies on internal: true, but this Docker Engine forwards DNS from internal networks upstream (CVE-2024-29018)",
			"upgrade Docker Engine to 26.0.0+, 25.0.4+ or 23.0.11+"),
			check: func(c *ctx) {
				vuln, known := dockerVulnerableDNS(c.opts.EngineVersion)
				if !known || !vuln {
					return
				}
				for _, a := range c.compose.agentNames() {
					for _, net := range c.compose.serviceNetworks(a) {
						if c.compose.networkInternal(net) {
							c.report("CMP-N06", P("networks", net, "internal"), 0, "agent %q relies on internal network %q, but Docker Engine %s leaks DNS upstream from internal networks", a, net, c.opts.EngineVersion)
						}
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N07", "Agent DNS outside the range", med, axN,
			"dns: on the agent points at a resolver outside the range (a direct DNS channel, or the internal-network leak upstream)",
			"remove dns: or point it at an in-range sinkhole resolver"),
			check: func(c *ctx) {
				for _, a := range c.compose.agentNames() {
					for i, d := range strList(c.compose.services[a]["dns"]) {
						if !isPrivateResolver(d) {
							c.report("CMP-N07", svcPath(a, "dns", i), 0, "agent %q uses resolver %s outside the range", a, d)
						}
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N08", "extra_hosts to the host or metadata", high, axN,
			"extra_hosts maps a name to the host gateway or a cloud metadata address, or remaps a model/scorer name",
			"remove the extra_hosts entry"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for _, e := range extraHosts(s) {
						switch {
						case e.ip == catalog.HostGateway || catalog.MetadataAddrs[e.ip]:
							c.report("CMP-N08", svcPath(n, "extra_hosts", e.key), high, "service %q maps %s to %s", n, e.host, e.ip)
						case modelHostRE.MatchString(e.host):
							c.report("CMP-N08", svcPath(n, "extra_hosts", e.key), med, "service %q remaps %s to %s (confuses allowlists)", n, e.host, e.ip)
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-N09", "Published ports", med, axN,
			"ports are published on the host: the agent becomes reachable from outside the range",
			"remove ports: (use expose: for in-range traffic) or bind to 127.0.0.1"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for i, raw := range getList(s, "ports") {
						pub, hostIP := getString(raw, "published"), getString(raw, "host_ip")
						if pub == "" && getString(raw, "mode") != "host" {
							continue
						}
						switch {
						case c.compose.agents[n]:
							c.report("CMP-N09", svcPath(n, "ports", i), med, "agent %q publishes port %s on the host", n, pub)
						case hostIP == "" || hostIP == "0.0.0.0" || hostIP == "::":
							c.report("CMP-N09", svcPath(n, "ports", i), med, "service %q publishes port %s on every host interface", n, pub)
						default:
							if p, err := strconv.Atoi(strings.SplitN(pub, "-", 2)[0]); err == nil && p < 1024 {
								c.report("CMP-N09", svcPath(n, "ports", i), low, "service %q publishes privileged host port %d", n, p)
							}
						}
					}
				})
			}},
		ruleDef{Rule: cr("CMP-N10", "IPv6 on the agent network", med, axN,
			"enable_ipv6 on an agent network: IPv6 egress is often left open when IPv4 is locked down",
			"remove enable_ipv6 from the agent's networks"),
			check: agentNetRule("CMP-N10", "enable_ipv6", "agent network %q enables IPv6")},
		ruleDef{Rule: cr("CMP-N11", "Model API reachable from the agent", high, axN,
			"the agent is given a model endpoint: it can call models or leak prompts outside the harness",
			"remove models:/model endpoint variables from the agent; Inspect calls the model from outside"),
			check: func(c *ctx) {
				for _, a := range c.compose.agentNames() {
					s := c.compose.services[a]
					if s["models"] != nil {
						c.report("CMP-N11", svcPath(a, "models"), 0, "agent %q is attached to Compose models", a)
					}
					for _, e := range c.env(a) {
						if catalog.ModelEndpointRE.MatchString(e.name) {
							c.report("CMP-N11", e.path, 0, "agent %q gets model endpoint variable %s", a, e.name)
						}
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N12", "Proxy exemptions", med, axN,
			"NO_PROXY exempts destinations from the egress proxy: they become direct connections",
			"keep NO_PROXY to in-range names only; never *, metadata IPs or the scorer"),
			check: func(c *ctx) {
				for _, a := range c.compose.agentNames() {
					for _, v := range c.env(a) {
						if strings.ToUpper(v.name) != "NO_PROXY" {
							continue
						}
						for _, e := range strings.Split(v.value, ",") {
							e = strings.TrimSpace(e)
							if e == "*" || catalog.MetadataAddrs[e] || strings.HasSuffix(e, ".internal") || modelHostRE.MatchString(e) || c.compose.isScoring(e) {
								c.report("CMP-N12", v.path, med, "agent %q exempts %q from the proxy", a, e)
							}
						}
					}
				}
			}},
		ruleDef{Rule: cr("CMP-N13", "Agent network created outside Compose", med, axN,
			"the agent's network is external: its isolation cannot be verified from this file",
			"define the agent network in this file with internal: true"),
			check: agentNetRule("CMP-N13", "external", "agent network %q is external; its isolation is unknown")},
		ruleDef{Rule: cr("CMP-N14", "Agent network attachable", low, axN,
			"attachable: true lets standalone containers join the agent's network",
			"remove attachable: true"),
			check: agentNetRule("CMP-N14", "attachable", "agent network %q is attachable")},
		ruleDef{Rule: cr("CMP-N15", "Legacy links", low, axN,
			"links/external_links wire services together outside networks and leak addresses into env",
			"remove links and use networks"),
			check: func(c *ctx) {
				c.composeServices(func(n string, s map[string]any) {
					for _, k := range []string{"links", "external_links"} {
						if len(strList(s[k])) > 0 {
							c.report("CMP-N15", svcPath(n, k), 0, "service %q uses %s", n, k)
						}
					}
				})
			}},
	)
}

// agentNetRule flags a boolean network key on any network an agent joins.
func agentNetRule(id, key, detail string) func(*ctx) {
	return func(c *ctx) {
		seen := map[string]bool{}
		for _, a := range c.compose.agentNames() {
			for _, net := range c.compose.serviceNetworks(a) {
				if seen[net] {
					continue
				}
				seen[net] = true
				b, _ := getBool(c.compose.networks[net], key)
				if key == "external" && !b {
					b, _ = getBool(c.compose.networks[net], "external", "external")
				}
				if b {
					c.report(id, P("networks", net, key), 0, detail, net)
				}
			}
		}
	}
}

type extraHost struct{ key, host, ip string }

// extraHosts reads extra_hosts in map form (host: ip or [ips]) and list form ("host=ip",
// legacy "host:ip"); key is the path element the entry was written under.
func extraHosts(s map[string]any) []extraHost {
	var out []extraHost
	switch v := s["extra_hosts"].(type) {
	case map[string]any:
		for _, h := range sortedKeys(v) {
			for _, ip := range strList(v[h]) {
				out = append(out, extraHost{h, h, ip})
			}
		}
	case []any:
		for i, raw := range strList(v) {
			sep := strings.Index(raw, "=")
			if sep < 0 {
				sep = strings.Index(raw, ":")
			}
			if sep < 0 {
				continue
			}
			out = append(out, extraHost{strconv.Itoa(i), raw[:sep], strings.Trim(raw[sep+1:], "[]")})
		}
	}
	return out
}

package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// checkDef describes one kind of check verify reports.
type checkDef struct {
	id    string
	title string
	sev   catalog.Severity
	fix   string
}

// The checks verify owns, and the configured-target checks.
var (
	checkEgress = checkDef{"VFY-EGRESS", "Egress to verify's outside canary", catalog.SeverityCritical,
		"put the agent only on networks with internal: true; remove network_mode: bridge/host/default"}
	checkDNS = checkDef{"VFY-DNS", "DNS queries reach a resolver outside the sandbox", catalog.SeverityHigh,
		"keep the agent only on internal networks; do not attach it to a network with an external endpoint"}
	checkHostGW = checkDef{"VFY-HOSTGW", "Host side of the sandbox network reachable", catalog.SeverityMedium,
		"bind host services to loopback, or drop traffic from the sandbox bridges to the host in INPUT"}
	checkScorer = checkDef{"VFY-SCORER", "Scorer reachable from the sandbox", catalog.SeverityCritical,
		"give the scorer its own network that the agent does not join"}
	checkCfgEgress   = checkDef{"VFY-CFG-EGRESS", "Configured egress target reachable", catalog.SeverityCritical, "block egress from the agent's networks"}
	checkCfgScorer   = checkDef{"VFY-CFG-SCORER", "Configured scorer endpoint reachable", catalog.SeverityCritical, "isolate the scoring plane"}
	checkCfgMetadata = checkDef{"VFY-CFG-METADATA", "Configured metadata endpoint reachable", catalog.SeverityCritical, "block metadata addresses from the sandbox"}
	checkCfgDNS      = checkDef{"VFY-CFG-DNS", "Configured DNS canary name resolved", catalog.SeverityHigh, "stop DNS forwarding from the sandbox"}
)

var checksByKind = map[string]checkDef{TargetEgress: checkEgress, TargetHostGW: checkHostGW, TargetScorer: checkScorer}

// CheckDefs lists every check ID with its title, severity and fix, for renderers (SARIF rules).
func CheckDefs() []struct {
	ID, Title, Fix string
	Severity       catalog.Severity
} {
	var out []struct {
		ID, Title, Fix string
		Severity       catalog.Severity
	}
	for _, d := range []checkDef{checkEgress, checkDNS, checkHostGW, checkScorer, checkCfgEgress, checkCfgScorer, checkCfgMetadata, checkCfgDNS} {
		out = append(out, struct {
			ID, Title, Fix string
			Severity       catalog.Severity
		}{d.id, d.title, d.fix, d.sev})
	}
	return out
}

// ownedClasses are probe verdict classes that verify's own checks decide with canary evidence;
// the probe's view of them is kept in its report but not repeated as findings.
var ownedClasses = map[string]bool{"RK-EGRESS": true, "RK-DNS": true, "RK-SCORER": true}

// assess turns the probe results and the canary log into checks, findings, the measured
// profile and the list of failures.
func (r *run) assess() {
	lint := r.lintVerdictInput()
	for _, m := range r.members {
		raw := r.raw[m]
		mt := r.targets[m]
		hostgw := splitHostGW(&raw, mt)
		rep := probe.Assess(raw, nil, lint[m], r.versions)
		r.res.Probes = append(r.res.Probes, MemberProbe{Member: m, Role: r.roles[m], Report: rep})
		if !rep.Probed() {
			r.res.unverified = append(r.res.unverified, fmt.Sprintf("member %s: %s", m, strings.TrimPrefix(raw.CouldNotProbe, "could not probe: ")))
		}
		var net facts.Network
		if raw.Facts != nil {
			net = raw.Facts.Network
		}
		probed := rep.Probed()
		for _, t := range mt.Targets {
			pool := net.Egress
			switch t.Kind {
			case TargetHostGW:
				pool = hostgw
			case TargetScorer:
				pool = net.Scorer
			}
			r.addCheck(checksByKind[t.Kind], m, t.Addr, t.What, probed, findNet(pool, t.Addr), r.tcpEvidence(t.Tag))
		}
		r.dnsCheck(m, mt, probed, net.DNS)
		r.configChecks(m, probed, net)
		for _, v := range rep.Verdicts.Classes {
			if v.Status != verdict.Exposed || ownedClasses[v.Class] {
				continue
			}
			f := Finding{Source: "probe", RuleID: v.Class, Title: v.Name, Severity: v.Severity, Axis: v.Axis, Member: m, Message: v.Name}
			for _, e := range v.Evidence {
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s: %s", e.Source, e.Check, e.Value))
			}
			if len(f.Evidence) > 0 {
				f.Message += " (" + f.Evidence[0] + ")"
			}
			r.res.Findings = append(r.res.Findings, f)
		}
	}
	r.measure()
	r.compare()
	r.failOn()
}

// Unverified lists why verification was incomplete (empty when it was complete).
func (r Result) Unverified() []string { return r.unverified }

// lintVerdictInput gives each member the lint findings about it, so probe verdicts can cite
// the spec line that should have prevented what the probe saw.
func (r *run) lintVerdictInput() map[string][]verdict.LintFinding {
	out := map[string][]verdict.LintFinding{}
	for _, f := range r.lint.Findings {
		m := memberOf(f.Path)
		out[m] = append(out[m], verdict.LintFinding{RuleID: f.RuleID, Severity: f.Severity, Member: m})
	}
	for m, fs := range out {
		if m != "" {
			out[m] = append(fs, out[""]...)
		}
	}
	return out
}

// splitHostGW moves the probe's host-gateway connects out of its egress list: reaching the
// host side of the sandbox's own bridge is not egress, and must not be scored as such.
func splitHostGW(raw *probe.Result, mt MemberTargets) []facts.NetResult {
	if raw.Facts == nil {
		return nil
	}
	hg := map[string]bool{}
	for _, t := range mt.Targets {
		if t.Kind == TargetHostGW {
			hg[t.Addr] = true
		}
	}
	f := *raw.Facts
	var egress, hostgw []facts.NetResult
	for _, n := range f.Network.Egress {
		if hg[n.Target] {
			hostgw = append(hostgw, n)
		} else {
			egress = append(egress, n)
		}
	}
	if len(egress) == 0 {
		egress = []facts.NetResult{{Check: "E-TCP-01", Status: facts.NetNotTested, Detail: "no egress canary configured"}}
	}
	f.Network.Egress = egress
	raw.Facts = &f
	return hostgw
}

func findNet(pool []facts.NetResult, target string) *facts.NetResult {
	for i := range pool {
		if pool[i].Target == target {
			return &pool[i]
		}
	}
	return nil
}

// tcpEvidence lists the canary's logged connections on a tag.
func (r *run) tcpEvidence(tag string) []string {
	var out []string
	since, transient := r.transient[tag]
	for _, e := range r.events {
		if e.Kind == canary.KindTCP && e.Tag == tag && !(transient && e.Time.Before(since)) {
			out = append(out, fmt.Sprintf("canary logged a connection on %s from %s at %s", e.Addr, e.Remote, e.Time.Format("15:04:05.000")))
		}
	}
	return out
}

// addCheck records one check: reached when the probe connected or the canary logged the
// contact; not tested when the member could not be probed and the canary saw nothing.
func (r *run) addCheck(d checkDef, member, target, what string, probed bool, res *facts.NetResult, canaryEv []string) {
	c := Check{ID: d.id, Member: member, Target: target, What: what, Axis: catalog.AxisNetwork, Evidence: []string{}}
	reached := len(canaryEv) > 0
	switch {
	case res != nil:
		c.Evidence = append(c.Evidence, fmt.Sprintf("probe in %s: %s %s → %s%s (%d ms)", member, res.Proto, res.Target, res.Status, detail(res.Detail), res.Ms))
		reached = reached || res.Status == facts.NetReachable
	case !probed:
		c.Evidence = append(c.Evidence, "probe did not run in "+member)
	}
	c.Evidence = append(c.Evidence, canaryEv...)
	switch {
	case reached:
		c.Status, c.Severity = Reached, d.sev
	case res == nil && !probed:
		c.Status = NotTested
	default:
		c.Status = NotReached
		if len(canaryEv) == 0 && !strings.HasPrefix(d.id, "VFY-CFG") {
			c.Evidence = append(c.Evidence, "canary logged no contact")
		}
	}
	r.res.Checks = append(r.res.Checks, c)
	if c.Status == Reached {
		r.res.Findings = append(r.res.Findings, Finding{Source: "verify", RuleID: d.id, Title: d.title, Severity: d.sev,
			Axis: catalog.AxisNetwork, Member: member, Message: fmt.Sprintf("%s reached %s", member, what), Evidence: c.Evidence, Fix: d.fix})
	}
}

func detail(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func (r *run) dnsCheck(m string, mt MemberTargets, probed bool, dns []facts.NetResult) {
	if mt.NoDNS != "" {
		r.res.Checks = append(r.res.Checks, Check{ID: checkDNS.id, Member: m, What: "DNS canary", Status: NotTested, Axis: catalog.AxisNetwork, Evidence: []string{mt.NoDNS}})
		return
	}
	if mt.DNSName == "" {
		return
	}
	var res *facts.NetResult
	for i := range dns {
		if dns[i].Target == mt.DNSName {
			if res == nil || dns[i].Status == facts.NetReachable {
				res = &dns[i]
			}
		}
	}
	var ev []string
	for _, e := range r.events {
		if e.Kind == canary.KindDNS && e.OK && strings.HasSuffix(strings.ToLower(e.Name), strings.ToLower(mt.DNSSuffix)) {
			ev = append(ev, fmt.Sprintf("DNS canary logged a query (%s) for %s from %s at %s", e.Detail, e.Name, e.Remote, e.Time.Format("15:04:05.000")))
		}
	}
	if res != nil && res.Via != "" {
		res = &facts.NetResult{Proto: "dns via " + res.Via, Target: res.Target, Status: res.Status, Detail: res.Detail, Ms: res.Ms}
	}
	r.addCheck(checkDNS, m, mt.DNSName, "the DNS canary resolver outside the sandbox ("+mt.DNSSuffix+")", probed, res, ev)
}

// configChecks report the operator's configured probe targets (config probe:) by their probe
// result alone — verify has no canary there.
func (r *run) configChecks(m string, probed bool, n facts.Network) {
	for _, group := range []struct {
		d       checkDef
		targets []string
		pool    []facts.NetResult
	}{
		{checkCfgEgress, r.o.Targets.Egress, n.Egress},
		{checkCfgScorer, r.o.Targets.Scorer, n.Scorer},
		{checkCfgMetadata, r.o.Targets.Metadata, n.Metadata},
		{checkCfgDNS, r.o.Targets.DNS, n.DNS},
	} {
		for _, t := range group.targets {
			addr := strings.TrimPrefix(strings.TrimPrefix(t, "tcp:"), "udp:")
			res := findNet(group.pool, addr)
			if res == nil {
				res = findNet(group.pool, t)
			}
			r.addCheck(group.d, m, t, "configured target "+t, probed, res, nil)
		}
	}
}

// measure derives the agent's T.H.N from what was observed.
func (r *run) measure() {
	agent := r.res.Agent
	why := map[string][]string{"T": {}, "H": {}, "N": {}}
	var rep *probe.Report
	for i := range r.res.Probes {
		if r.res.Probes[i].Member == agent {
			rep = &r.res.Probes[i].Report
		}
	}
	if rep == nil || !rep.Probed() {
		for _, a := range Axes {
			why[a] = append(why[a], "not measured: the probe did not run in the agent")
		}
		r.axisWhy = why
		return
	}
	f := rep.Result.Facts
	var tools []string
	for _, cat := range []string{"shell", "runtime", "compiler"} {
		if found := f.Tooling.Found[cat]; len(found) > 0 {
			tools = append(tools, cat+": "+strings.Join(found, ", "))
		}
	}
	if len(tools) > 0 {
		r.res.Measured.T = "T0"
		why["T"] = append(why["T"], "the agent can run arbitrary programs ("+strings.Join(tools, "; ")+")")
	} else {
		r.res.Measured.T = "T1"
		why["T"] = append(why["T"], "no shell, interpreter or compiler found in the agent")
	}

	r.res.Measured.H = r.lint.Profile.H
	why["H"] = append(why["H"], "local containers on "+r.res.Backend)
	for _, v := range rep.Verdicts.Classes {
		if v.Axis == catalog.AxisHost && v.Status == verdict.Exposed && v.Severity >= catalog.SeverityCritical {
			r.res.Measured.H = "H0"
			ev := ""
			if len(v.Evidence) > 0 {
				ev = " (" + v.Evidence[0].Check + " " + v.Evidence[0].Value + ")"
			}
			why["H"] = append(why["H"], fmt.Sprintf("escape primitive %s %s%s", v.Class, v.Name, ev))
		}
	}

	var egress, dns, tested []string
	for _, c := range r.res.Checks {
		if c.Member != agent {
			continue
		}
		if c.Status != NotTested && (c.ID == checkEgress.id || c.ID == checkCfgEgress.id) {
			tested = append(tested, c.ID)
		}
		if c.Status != Reached {
			continue
		}
		switch c.ID {
		case checkEgress.id, checkCfgEgress.id:
			egress = append(egress, fmt.Sprintf("%s reached %s: %s", agent, c.What, strings.Join(c.Evidence, "; ")))
		case checkDNS.id, checkCfgDNS.id:
			dns = append(dns, fmt.Sprintf("%s reached %s: %s", agent, c.What, strings.Join(c.Evidence, "; ")))
		}
	}
	for _, v := range rep.Verdicts.Classes {
		if v.Class == "RK-HOSTNET" && v.Status == verdict.Exposed {
			egress = append(egress, "the agent is in the host's network namespace")
		}
	}
	switch {
	case len(egress) > 0:
		r.res.Measured.N, why["N"] = "N0", egress
	case len(tested) == 0:
		why["N"] = append(why["N"], "not measured: no egress check ran")
	case len(dns) > 0:
		r.res.Measured.N, why["N"] = "N1", append(dns, "no TCP egress to the outside canary")
	default:
		r.res.Measured.N = "N2"
		why["N"] = append(why["N"], "the agent reached neither the outside canary nor the DNS canary")
	}
	r.axisWhy = why
}

// compare lines the measured profile up against the expected one; every weaker axis is a
// failure carrying its evidence.
func (r *run) compare() {
	for _, a := range Axes {
		exp, got := r.res.Expected.Get(a), r.res.Measured.Get(a)
		ar := AxisResult{Axis: a, Expected: exp, Measured: got, Why: r.axisWhy[a]}
		if ar.Why == nil {
			ar.Why = []string{}
		}
		switch {
		case exp == "":
		case got == "":
			r.res.unverified = append(r.res.unverified, fmt.Sprintf("%s not measured (expected %s)", a, exp))
		case Weaker(got, exp):
			ar.Weaker = true
			r.res.failures = append(r.res.failures, fmt.Sprintf("%s is %s, expected %s", a, got, exp))
			axis := map[string]catalog.Axis{"T": catalog.AxisTooling, "H": catalog.AxisHost, "N": catalog.AxisNetwork}[a]
			r.res.Findings = append(r.res.Findings, Finding{Source: "verify", RuleID: "VFY-PROFILE-" + a,
				Title: "Weaker than the expected profile", Severity: catalog.SeverityHigh, Axis: axis, Member: r.res.Agent,
				Message: fmt.Sprintf("measured %s, expected %s", got, exp), Evidence: ar.Why})
		}
		r.res.Axes = append(r.res.Axes, ar)
	}
}

// failOn adds a failure when findings reach the --fail-on severity.
func (r *run) failOn() {
	seen := map[string]bool{}
	var ids []string
	n := 0
	for _, f := range r.res.Findings {
		if f.Severity < r.o.FailOn || strings.HasPrefix(f.RuleID, "VFY-PROFILE-") {
			continue
		}
		n++
		if !seen[f.RuleID] {
			seen[f.RuleID] = true
			ids = append(ids, f.RuleID)
		}
	}
	if n == 0 {
		return
	}
	sort.Strings(ids)
	r.res.failures = append(r.res.failures, fmt.Sprintf("%d finding(s) at or above %s: %s", n, r.o.FailOn, strings.Join(ids, ", ")))
}

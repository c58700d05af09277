package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// tool is one program under measurement: how to start it on the bench cluster and how to read
// its screen.
type tool struct {
	name string
	bin  string
	// setup writes the tool's fresh configuration under dir and returns its argv and environment;
	// tag ("" or e.g. "-restart") tells the starts on one home apart.
	setup func(t *tool, dir, tag string, b *bench) (argv, env []string, err error)
	// full reports whether the screen shows the complete live table of releases sandboxes
	// (pods pods).
	full func(screen string, releases, pods int) bool
	// filtered reports whether the screen shows the table filtered to one release.
	filtered func(screen string, perRelease int) bool
	// filterKeys opens the filter prompt; the filter text and Enter follow.
	filterKeys []string
	// helpKey toggles the help; helpShown reports whether the screen shows it (nil: the
	// tool's responsiveness while loading is not measured).
	helpKey   string
	helpShown func(screen string) bool
	// drawn reports whether the screen shows the tool's own first frame (nil: anything on it;
	// the demo prints progress before its workbench starts).
	drawn func(screen string) bool
	// filterText is what the filter prompt gets: it must match one release's sandboxes.
	filterText func(releases int) string
	// quitKeys end the tool as a user would (it saves what it keeps across starts); cached
	// reports whether a restarted tool shows the releases it kept (nil: no cache to measure).
	quitKeys []string
	cached   func(screen string, releases int) bool
}

// firstFrame reports whether the screen shows the tool's first frame.
func (t *tool) firstFrame(screen string) bool {
	if t.drawn != nil {
		return t.drawn(screen)
	}
	return strings.TrimSpace(screen) != ""
}

// isolatedEnv gives a tool a home of its own and no route off the machine: any HTTP client that
// honours the proxy variables is sent to a closed loopback port, except for the local API server.
func isolatedEnv(dir, kubeconfig string) []string {
	return []string{
		"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"KUBECONFIG=" + kubeconfig, "TERM=xterm-256color",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost,::1",
	}
}

var (
	rkCount = regexp.MustCompile(`(\d+)/(\d+) sandboxes`)
	// k9s titles its table "pods(all)[5,000]", and "pods(all)[2] </filter>" when filtered.
	k9sCount = regexp.MustCompile(`(?i)pods\(all\)\[([\d,]+)\]`)
	k9sFilt  = regexp.MustCompile(`(?i)pods\(all\)\[(\d+)\] </[^>]+>`)
)

// rangekeeperStart writes config under dir and returns rangekeeper's argv (with args after the
// global flags) and environment, with the profiling hook's variables the bench asks for (each
// start on a home its own trace file: a restart must not truncate the measured start's).
func rangekeeperStart(t *tool, dir, tag string, b *bench, config, kubeconfig string, args ...string) ([]string, []string, error) {
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		return nil, nil, err
	}
	env := isolatedEnv(dir, kubeconfig)
	if b.pprofAddr != "" {
		env = append(env, pprofEnv+"="+b.pprofAddr)
	}
	if b.trace {
		env = append(env, traceEnv+"="+filepath.Join(b.out, fmt.Sprintf("%s%s-start.trace", filepath.Base(dir), tag)),
			traceForEnv+"="+b.traceFor.String())
	}
	return append([]string{t.bin, "--config", cfg, "--state", filepath.Join(dir, "state.db")}, args...), env, nil
}

func rangekeeperTool(name, bin string) *tool {
	return &tool{
		name: name,
		bin:  bin,
		setup: func(t *tool, dir, tag string, b *bench) ([]string, []string, error) {
			// Docker stays on (the environment's engine, as for an operator); Kubernetes is the
			// bench cluster, every namespace.
			body := fmt.Sprintf("kubernetes:\n  enabled: true\n  kubeconfig: %s\n  contexts: [%s]\n", b.kubeconfig, b.context)
			return rangekeeperStart(t, dir, tag, b, body, b.kubeconfig)
		},
		full: func(s string, releases, _ int) bool {
			m := rkCount.FindStringSubmatch(s)
			if m == nil || !strings.Contains(s, "[ok] k8s:") || strings.Contains(s, "connecting") {
				return false
			}
			shown, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			return shown == total && total >= releases // Docker's sandboxes, if any, come on top
		},
		filtered: func(s string, _ int) bool {
			m := rkCount.FindStringSubmatch(s)
			return m != nil && m[1] == "1"
		},
		filterKeys: []string{"/"},
		filterText: func(releases int) string { return releaseName(releases / 2) },
		helpKey:    "?",
		helpShown:  func(s string) bool { return strings.Contains(s, "rangekeeper keys") },
		quitKeys:   []string{"q"},
		cached: func(s string, releases int) bool {
			m := rkCount.FindStringSubmatch(s)
			if m == nil {
				return false
			}
			total, _ := strconv.Atoi(m[2])
			return total >= releases
		},
	}
}

// demoTool is rangekeeper's demo (`rangekeeper demo --fleet N`): the Docker demo range on this
// machine's engine beside N SIMULATED Kubernetes releases, no cluster. Its releases are N.
func demoTool(name, bin string) *tool {
	t := rangekeeperTool(name, bin)
	t.setup = func(t *tool, dir, tag string, b *bench) ([]string, []string, error) {
		return rangekeeperStart(t, dir, tag, b, "", filepath.Join(dir, "no-kubeconfig"), "demo", "--fleet", strconv.Itoa(b.demoFleet))
	}
	full := t.full
	t.full = func(s string, releases, pods int) bool {
		return full(s, releases, pods) && strings.Contains(s, "[ok] k8s:simulated")
	}
	// simfleet names its releases agent-env-<task>-<5-digit index>.
	t.filterText = func(releases int) string { return fmt.Sprintf("-%05d", releases/2) }
	t.drawn = func(s string) bool { return strings.Contains(s, "sandboxes") }
	// Each demo start rebuilds its Docker range before the first frame: a restart would time
	// that, not the cache (the Kubernetes bench times restarts).
	t.cached = nil
	return t
}

func k9sTool(bin string) *tool {
	return &tool{
		name: "k9s",
		bin:  bin,
		setup: func(t *tool, dir, tag string, b *bench) ([]string, []string, error) {
			cfgDir := filepath.Join(dir, "k9s")
			if err := os.MkdirAll(cfgDir, 0o700); err != nil {
				return nil, nil, err
			}
			// skipLatestRevCheck: k9s would otherwise ask GitHub for its latest release.
			body := "k9s:\n  skipLatestRevCheck: true\n  readOnly: true\n  ui:\n    skin: \"\"\n"
			if err := os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(body), 0o600); err != nil {
				return nil, nil, err
			}
			env := append(isolatedEnv(dir, b.kubeconfig), "K9S_CONFIG_DIR="+cfgDir, "K9S_LOGS_DIR="+filepath.Join(dir, "logs"))
			return []string{t.bin, "--kubeconfig", b.kubeconfig, "--context", b.context, "--all-namespaces", "--command", "pods", "--readonly"}, env, nil
		},
		full: func(s string, _, pods int) bool {
			m := k9sCount.FindStringSubmatch(s)
			return m != nil && number(m[1]) >= pods
		},
		filtered: func(s string, perRelease int) bool {
			m := k9sFilt.FindStringSubmatch(s)
			return m != nil && number(m[1]) == perRelease
		},
		filterKeys: []string{"/"},
		filterText: func(releases int) string { return releaseName(releases / 2) },
	}
}

// number reads a count that may have thousands separators ("5,000").
func number(s string) int {
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		return -1
	}
	return n
}

// Command benchfleet measures rangekeeper side by side with k9s as an operator feels them, on a
// real control plane (kube-apiserver, etcd, kwok) filled with N Running pods made from Inspect's
// agent-env chart: both run in tmux (200×50 by default) and the harness reads their screens.
// Per tool and fleet size it reports the time to the full live table (fresh state, backend
// healthy), filter-to-screen time, RSS when full and after an idle period, and idle CPU, with
// the ratios rangekeeper/k9s. `make bench-fleet` builds everything and runs it; it is not part
// of `make test`. Everything it starts listens on and talks to loopback only.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"k8s.io/client-go/tools/clientcmd"
)

// pprofEnv names the loopback address the profiling hook (package profhook) serves pprof on.
const pprofEnv = "RANGEKEEPER_PPROF"

// traceEnv names the file the hook writes a start-up execution trace to (-trace), and
// traceForEnv how long that trace runs (-trace-for).
const (
	traceEnv    = "RANGEKEEPER_TRACE"
	traceForEnv = "RANGEKEEPER_TRACE_FOR"
)

// bench is one harness invocation.
type bench struct {
	kubeconfig, context string
	spec                *fleetSpec
	work, out           string
	width, height       int
	idle, cpuWindow     time.Duration
	loadTimeout         time.Duration
	loadProfile         time.Duration
	pprofAddr           string
	trace               bool
	traceFor            time.Duration
	keys                bool
	demo                bool // measuring `rangekeeper demo --fleet demoFleet`
	demoFleet           int
	start               time.Time
	keySets             int // key-press sample files written (saveKeys)
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == echoRefArg { // the keys phase's reference program
		if err := echoRef(); err != nil {
			os.Exit(1)
		}
		return
	}
	kubetest.ReaperMain() // the control plane's reaper re-executes this binary
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchfleet:", err)
		os.Exit(1)
	}
}

func run() error {
	b := &bench{start: time.Now()}
	podsFlag := flag.String("pods", "5000,50000", "fleet sizes in pods, comma-separated, ascending (each size tops up the previous)")
	services := flag.String("services", "default,victim", "agent-env services per release (one pod each)")
	runs := flag.Int("runs", 1, "runs per tool and fleet size (medians are reported)")
	toolsFlag := flag.String("tools", "rangekeeper,k9s", "tools to measure")
	rkBin := flag.String("rangekeeper", "bin/bench/rangekeeper", "rangekeeper binary (built with the profiling hook by make bench-fleet)")
	k9sBin := flag.String("k9s", "bin/bench/k9s", "k9s binary")
	baseline := flag.String("baseline", "", "an earlier rangekeeper binary, measured as tool \"baseline\" (e.g. -tools baseline,rangekeeper,k9s) for before/after tables")
	chart := flag.String("chart", "backends/kubernetes/testdata/agent-env/chart", "the agent-env chart to render releases from")
	records := flag.Bool("helm-records", true, "create Helm's release record Secret for each release")
	workers := flag.Int("workers", 32, "concurrent creates while filling the cluster")
	flag.DurationVar(&b.idle, "idle", 5*time.Minute, "idle period after the table is full, before RSS is read again")
	flag.DurationVar(&b.cpuWindow, "cpu-window", 60*time.Second, "idle CPU is measured over the last this-long of the idle period")
	flag.DurationVar(&b.loadTimeout, "load-timeout", 10*time.Minute, "give up on a tool that shows no full table within this")
	flag.DurationVar(&b.loadProfile, "load-profile", 30*time.Second, "with -pprof: length of the CPU profile taken from rangekeeper's start")
	flag.IntVar(&b.width, "width", 200, "terminal columns")
	flag.IntVar(&b.height, "height", 50, "terminal rows")
	flag.StringVar(&b.out, "out", "", "directory for profiles and the report (default: a new directory under bin/bench)")
	flag.BoolVar(&b.keys, "keys", true, "per run, start each tool again and time help-key presses to the screen until its table is full (key-to-frame while loading)")
	flag.BoolVar(&b.trace, "trace", false, "write an execution trace of each rangekeeper start's first -trace-for into the output directory (go tool trace): where a start's wall time goes")
	flag.DurationVar(&b.traceFor, "trace-for", 5*time.Second, "with -trace: how long each start is traced; cover a -keys start's load (e.g. 30s at 50,000 pods) to read the workbench's own key-to-frame with hack/keytrace")
	again := flag.Bool("again", false, "after the report, keep the cluster and measure every tool again at the largest size at each SIGUSR1 (rebuild a binary in between): one fill, several before/after rounds; interrupt to stop")
	hold := flag.Bool("hold", false, "after filling to the largest size, print the kubeconfig and keep the cluster until interrupted, measuring nothing: for running a tool by hand (strace, perf)")
	demo := flag.Bool("demo", false, "measure `rangekeeper demo --fleet N` instead (no control plane, no k9s): -pods gives the SIMULATED releases N (no restart: each demo start rebuilds its Docker range)")
	compression := flag.Bool("compression", true, "let the API server gzip its responses (false writes disable-compression into the kubeconfig both tools read, as a user with a same-host cluster may)")
	pprof := flag.Bool("pprof", false, "serve pprof from rangekeeper (loopback) and save heap and CPU profiles: for diagnosis, not for the figures")
	flag.Parse()

	sizes, err := parseSizes(*podsFlag)
	if err != nil {
		return err
	}
	rk := rangekeeperTool
	if b.demo = *demo; b.demo {
		rk = demoTool
	}
	var tools []*tool
	for _, name := range strings.Split(*toolsFlag, ",") {
		switch name {
		case "rangekeeper":
			tools = append(tools, rk("rangekeeper", abs(*rkBin)))
		case "baseline":
			if *baseline == "" {
				return fmt.Errorf("-tools baseline needs -baseline BINARY")
			}
			tools = append(tools, rk("baseline", abs(*baseline)))
		case "k9s":
			if b.demo {
				continue // k9s has no demo
			}
			tools = append(tools, k9sTool(abs(*k9sBin)))
		default:
			return fmt.Errorf("-tools: unknown tool %q (rangekeeper, baseline, k9s)", name)
		}
	}
	for _, t := range tools {
		if _, err := os.Stat(t.bin); err != nil {
			return fmt.Errorf("%s binary: %w (make bench-fleet builds it)", t.name, err)
		}
	}
	if b.out == "" {
		b.out = filepath.Join("bin", "bench", "out-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return err
	}
	if b.work, err = os.MkdirTemp("", "benchfleet-"); err != nil {
		return err
	}
	defer os.RemoveAll(b.work)
	if *pprof {
		if b.pprofAddr, err = loopbackAddr(); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if b.demo {
		return b.runDemo(ctx, tools, sizes, *runs)
	}
	if b.spec, err = renderFleetSpec(*chart, strings.Split(*services, ",")); err != nil {
		return err
	}
	assets, err := kubetest.AssetsDir()
	if err != nil {
		return err
	}
	if err := kubetest.RequireOptimised(assets); err != nil {
		return err
	}
	b.logf("starting the control plane (kube-apiserver, etcd, kwok) from %s", assets)
	c, err := kubetest.StartWith(assets, kubetest.Options{NoControllers: true})
	if err != nil {
		return err
	}
	defer c.Stop()
	b.kubeconfig, b.context = c.Kubeconfig, "envtest"
	if !*compression {
		if b.kubeconfig, err = withoutCompression(c.Kubeconfig, b.work); err != nil {
			return err
		}
	}
	pop, err := newPopulator(c, "inspect-bench", b.spec, *records)
	if err != nil {
		return err
	}

	var all []result
	for _, pods := range sizes {
		b.logf("filling the cluster to %d pods (%d releases of %d)", pods, pods/b.spec.perRel, b.spec.perRel)
		if err := pop.grow(ctx, pods, *workers, b.logf); err != nil {
			return err
		}
		if *hold {
			continue
		}
		all = append(all, b.round(ctx, tools, pods, *runs, "")...)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if *hold {
		b.logf("holding the cluster: KUBECONFIG=%s (context %s); interrupt to stop", b.kubeconfig, b.context)
		<-ctx.Done()
		return nil
	}
	rep := report(all, sizes, tools, b)
	fmt.Print(rep)
	if err := os.WriteFile(filepath.Join(b.out, "report.txt"), []byte(rep), 0o644); err != nil || !*again {
		return err
	}
	return b.measureAgain(ctx, tools, sizes[len(sizes)-1], *runs, all)
}

// measureAgain measures every tool at the held fleet size at each SIGUSR1 until ctx ends,
// printing (and saving as report-N.txt) one report per round, with the key presses of all rounds
// so far pooled, the first report's (first) included.
func (b *bench) measureAgain(ctx context.Context, tools []*tool, pods, runs int, first []result) error {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	every := first // every round's, for the pooled key presses (pooledKeys picks the size)
	for round := 2; ; round++ {
		b.logf("holding %d pods: kill -USR1 %d to measure again; interrupt to stop", pods, os.Getpid())
		select {
		case <-ctx.Done():
			return nil
		case <-usr1:
		}
		all := b.round(ctx, tools, pods, runs, fmt.Sprintf("round %d, ", round))
		if ctx.Err() != nil {
			return nil
		}
		every = append(every, all...)
		rep := report(all, []int{pods}, tools, b) + pooledKeys(every, pods, tools)
		fmt.Print(rep)
		if err := os.WriteFile(filepath.Join(b.out, fmt.Sprintf("report-%d.txt", round)), []byte(rep), 0o644); err != nil {
			return err
		}
	}
}

// round measures every tool runs times at one fleet size, alternating the tools.
func (b *bench) round(ctx context.Context, tools []*tool, pods, runs int, label string) []result {
	var all []result
	for run := range runs {
		for _, t := range tools {
			if ctx.Err() != nil {
				return all
			}
			b.logf("%s%d pods, run %d/%d: %s", label, pods, run+1, runs, t.name)
			r := b.measure(ctx, t, pods, run)
			if r.err != nil {
				b.logf("  %s: %v", t.name, r.err)
			}
			if b.keys && ctx.Err() == nil {
				r.keys, r.idleKeys, r.refKeys, r.keysFull, r.keysErr = b.keysWhileLoading(ctx, t, pods, run)
				if err := b.saveKeys(t.name, pods, r); err != nil {
					b.logf("  %s: %v", t.name, err)
				}
				if r.keysErr != nil {
					b.logf("  %s keys while loading: %v", t.name, firstLines(r.keysErr.Error(), 1))
				} else if len(r.keys) > 0 {
					b.logf("  %s: key→frame while loading p50 %.1f ms, p99 %.1f ms (n=%d; full table after %s); when full p50 %.1f ms, p99 %.1f ms (n=%d); reference while loading p50 %.1f ms, p99 %.1f ms", t.name,
						quantile(r.keys, 0.5), quantile(r.keys, 0.99), len(r.keys), r.keysFull.Round(time.Millisecond), quantile(r.idleKeys, 0.5), quantile(r.idleKeys, 0.99), len(r.idleKeys),
						quantile(r.refKeys, 0.5), quantile(r.refKeys, 0.99))
				}
			}
			all = append(all, r)
		}
	}
	return all
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || len(out) > 0 && n < out[len(out)-1] {
			return nil, fmt.Errorf("-pods %q: want ascending positive pod counts", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// loopbackAddr picks a free loopback port for the pprof hook.
func loopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// withoutCompression writes a copy of the kubeconfig at path into dir whose clusters set
// disable-compression: the API server then streams its lists and watch-lists uncompressed, which
// on one host spares both ends the gzip work and costs nothing.
func withoutCompression(path, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	for _, c := range cfg.Clusters {
		c.DisableCompression = true
	}
	out := filepath.Join(dir, "kubeconfig-uncompressed")
	return out, clientcmd.WriteToFile(*cfg, out)
}

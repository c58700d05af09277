package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/moby/moby/client"
	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/proxmox"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
	"github.com/rangekeeper/rangekeeper/demos"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
)

// addSimulatedRanges shows the tiers this machine has no real backend for, clearly marked
// SIMULATED, so the demo shows the whole workbench.
func addSimulatedRanges(f *factory, opts *demoOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if len(cfg.Proxmox) == 0 && os.Getenv("PROXMOX_HOST") == "" && os.Getenv("PROXMOX_CONFIG_FILE") == "" {
		sim, err := pvesim.StartDemo(pvesim.Options{})
		if err != nil {
			return fmt.Errorf("demo: simulated Proxmox: %w", err)
		}
		f.onClose(sim.Close)
		b, err := proxmox.NewSimulated("simulated", sim)
		if err != nil {
			return fmt.Errorf("demo: simulated Proxmox: %w", err)
		}
		f.extraBackends = append(f.extraBackends, b)
		fmt.Fprintf(f.ErrOut, "  + SIMULATED Proxmox range on %s (no Proxmox configured)\n", sim.URL())
	}
	if opts.Fleet > 0 && !cfg.Kubernetes.Enabled {
		f.extraBackends = append(f.extraBackends, simfleet.New("simulated", backends.KindKubernetes, opts.Fleet, 2*time.Second))
		fmt.Fprintf(f.ErrOut, "  + %d SIMULATED Kubernetes releases (no cluster configured)\n", opts.Fleet)
	}
	return nil
}

func init() { registerCommand(func(f *factory) *cobra.Command { return newDemoCmd(f, nil) }) }

type demoOptions struct {
	Down  bool
	NoTUI bool
	Fleet int // simulated Kubernetes releases shown beside the real Docker range
}

func newDemoCmd(f *factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the demo range on the local Docker Engine and open the workbench",
		Long: `Builds a small local image from static binaries (no registry), starts three
Inspect-style compose sandboxes (hardened, weak, scorer on the agent's network) and opens the TUI.
'rangekeeper demo --down' removes everything the demo made.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Fleet < 0 {
				return exitWith(2, fmt.Sprintf("--fleet %d: want 0 (none) or more", opts.Fleet))
			}
			return runOr(cmd, opts, runF, func(ctx context.Context, o *demoOptions) error { return runDemo(ctx, f, o) })
		},
	}
	cmd.Flags().BoolVar(&opts.Down, "down", false, "remove everything the demo made")
	cmd.Flags().BoolVar(&opts.NoTUI, "no-tui", false, "start the range and list it, without opening the TUI")
	cmd.Flags().IntVar(&opts.Fleet, "fleet", 240, "SIMULATED Kubernetes releases to add when no cluster is configured (0: none)")
	return cmd
}

func demoEngine(ctx context.Context) (*client.Client, error) {
	ep, err := docker.Endpoint{}.Resolve()
	if err != nil {
		return nil, exitWith(2, "demo: "+err.Error())
	}
	cli, err := docker.NewClient(ep)
	if err != nil {
		return nil, exitWith(2, "demo: "+err.Error())
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, exitWith(2, fmt.Sprintf("demo needs a running Docker Engine, but %s is not reachable: %v\n"+
			"Start the engine (or set DOCKER_HOST / a docker context) and try again.", ep.Host, err))
	}
	return cli, nil
}

func runDemo(ctx context.Context, f *factory, opts *demoOptions) error {
	cli, err := demoEngine(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if opts.Down {
		if err := demos.Down(ctx, cli); err != nil {
			return fmt.Errorf("demo --down: %w", err)
		}
		fmt.Fprintln(f.Out, "demo range removed")
		return nil
	}
	agentPath, err := demos.FindAgent()
	if err != nil {
		return exitWith(2, err.Error())
	}
	agent, err := os.ReadFile(agentPath)
	if err != nil {
		return err
	}
	busybox, _ := os.ReadFile("/bin/busybox") // optional: lets operators exec a shell in the demo
	fmt.Fprintln(f.ErrOut, "starting the demo range (building a local image, no registry)...")
	if err := demos.Up(ctx, cli, demos.Options{Agent: agent, Busybox: busybox}); err != nil {
		return err
	}
	for _, p := range demos.Range {
		fmt.Fprintf(f.ErrOut, "  %s\n", p.Name)
	}
	fmt.Fprintln(f.ErrOut, "remove it with: rangekeeper demo --down")
	if err := addSimulatedRanges(f, opts); err != nil {
		return err
	}
	if opts.NoTUI || !f.IsTerminal() {
		s, err := f.ReadySupervisor(ctx, 10*time.Second)
		if err != nil {
			return err
		}
		return runLs(ctx, f, s, &lsOptions{Output: "table", Now: time.Now})
	}
	return runTUI(ctx, f)
}

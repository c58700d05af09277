package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newPVECmd(f, nil) }) }

type pveSimOptions struct {
	SecretFile string
	TLS        bool
	ErrorRate  float64
	Latency    time.Duration
	Duration   time.Duration
}

func newPVECmd(f *factory, runF func(context.Context, *pveSimOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pve",
		Short: "Proxmox VE helpers",
		Args:  cobra.NoArgs,
	}
	opts := &pveSimOptions{}
	sim := &cobra.Command{
		Use:   "sim",
		Short: "Serve the SIMULATED Proxmox demo range on loopback",
		Long: `Starts pvesim, rangekeeper's in-memory Proxmox VE API simulator, on 127.0.0.1 with the demo
range (Inspect-style sample zones, one weak, one hardened) and prints a config entry for it.
The API token secret is written to --secret-file (mode 0600), never printed. Stop with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.ErrorRate < 0 || opts.ErrorRate > 1 {
				return exitWith(2, "pve sim: --error-rate must be between 0 and 1")
			}
			return runOr(cmd, opts, runF, func(ctx context.Context, o *pveSimOptions) error { return runPVESim(ctx, f, o) })
		},
	}
	fl := sim.Flags()
	fl.StringVar(&opts.SecretFile, "secret-file", "", "write the API token secret to this file (required)")
	fl.BoolVar(&opts.TLS, "tls", false, "serve HTTPS with a self-signed certificate (clients then need insecure_skip_verify)")
	fl.Float64Var(&opts.ErrorRate, "error-rate", 0, "inject 500 errors with this probability (0-1)")
	fl.DurationVar(&opts.Latency, "latency", 0, "add this latency to every answer")
	fl.DurationVar(&opts.Duration, "duration", 0, "stop after this long (default: until interrupted)")
	_ = sim.MarkFlagRequired("secret-file")
	cmd.AddCommand(sim)
	return cmd
}

func runPVESim(ctx context.Context, f *factory, opts *pveSimOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	sim, err := pvesim.StartDemo(pvesim.Options{TLS: opts.TLS, Faults: pvesim.Faults{ErrorRate: opts.ErrorRate, Latency: opts.Latency}})
	if err != nil {
		return fmt.Errorf("pve sim: %w", err)
	}
	defer sim.Close()
	if err := os.WriteFile(opts.SecretFile, []byte(sim.TokenSecret()+"\n"), 0o600); err != nil {
		return exitWith(2, fmt.Sprintf("pve sim: secret file: %v", err))
	}
	fmt.Fprintf(f.Out, "SIMULATED Proxmox VE API at %s (token %s, secret in %s)\n", sim.URL(), sim.TokenID(), opts.SecretFile)
	fmt.Fprintf(f.Out, "config entry:\n  proxmox:\n    - name: sim\n      url: %s\n      token_id: %s\n      token_secret_file: %s\n", sim.URL(), sim.TokenID(), opts.SecretFile)
	if opts.TLS {
		fmt.Fprintln(f.Out, "      insecure_skip_verify: true # self-signed simulator certificate")
	}
	<-ctx.Done()
	return nil
}

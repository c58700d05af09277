// Command rangekeeper-helm runs the Helm SDK for rangekeeper in a process of its own:
//
//	rangekeeper-helm uninstall --namespace NS --timeout D (--in-cluster | [--kubeconfig P] --context C) -- RELEASE
//
// The workbench and the CLI run it to tear down a release that has a Helm record, the way
// Inspect does. It is separate so that they do not carry the Helm SDK's package initialisation
// at every start (package helmrelease). It reads the cluster's credentials from the kubeconfig
// or the in-cluster service account itself; none pass through its arguments. Exit status: 0 the
// release is uninstalled, 3 Helm has no record of it, 1 it failed (the reason on stderr), 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/kubernetes"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/helmrelease"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a command line the helper cannot run.
var errUsage = errors.New("usage: rangekeeper-helm uninstall --namespace NS --timeout D (--in-cluster | [--kubeconfig P] --context C) -- RELEASE")

func run(ctx context.Context, args []string, stderr io.Writer) int {
	found, err := uninstall(ctx, args)
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 1
	case !found:
		fmt.Fprintln(stderr, "no Helm record of the release")
		return kubernetes.HelperExitNotFound
	}
	return 0
}

func uninstall(ctx context.Context, args []string) (found bool, err error) {
	if len(args) == 0 || args[0] != "uninstall" {
		return false, errUsage
	}
	fs := flag.NewFlagSet("uninstall", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o kubernetes.Options
	ns := fs.String("namespace", "", "the release's namespace")
	timeout := fs.Duration("timeout", kubernetes.DefaultTeardownTimeout, "how long to wait for the release's objects to go")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&o.Context, "context", "", "kubeconfig context")
	fs.BoolVar(&o.InCluster, "in-cluster", false, "use the in-cluster service account")
	if err := fs.Parse(args[1:]); err != nil {
		return false, fmt.Errorf("%w (%v)", errUsage, err)
	}
	if fs.NArg() != 1 || *ns == "" || *timeout <= 0 || (o.InCluster == (o.Context != "")) {
		return false, errUsage
	}
	_, rc, err := kubernetes.LoadConfig(o)
	if err != nil {
		return false, err
	}
	c, err := helmrelease.New(rc)
	if err != nil {
		return false, fmt.Errorf("helm: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout+30*time.Second)
	defer cancel()
	return c.UninstallRelease(ctx, *ns, fs.Arg(0), *timeout)
}

package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/internal/staticbin"
)

// ReleaseUninstaller runs Helm's uninstall of one release and waits, up to timeout, for its
// objects to be gone. found is false, with a nil error, when Helm has no record of the release.
type ReleaseUninstaller interface {
	UninstallRelease(ctx context.Context, ns, release string, timeout time.Duration) (found bool, err error)
}

// The Helm helper: cmd/rangekeeper-helm runs the Helm SDK (package helmrelease) in a process of
// its own, so the binaries that import this package do not pay the SDK's package
// initialisation at every start (~26 ms of the workbench's first frame).
const (
	HelperName = "rangekeeper-helm"
	HelperEnv  = "RANGEKEEPER_HELM" // a path that overrides where the helper is looked for
	// HelperExitNotFound is the helper's exit status when Helm has no record of the release.
	HelperExitNotFound = 3
	helperMaxSize      = 512 << 20
	helperMaxStderr    = 8 << 10
)

// helperUninstaller runs `rangekeeper-helm uninstall` against the backend's own kubeconfig
// context (or the in-cluster config); the helper reads the credentials itself, none pass
// through its arguments.
type helperUninstaller struct {
	kubeconfig, context string
	inCluster           bool
}

func (h helperUninstaller) UninstallRelease(ctx context.Context, ns, release string, timeout time.Duration) (bool, error) {
	bin, err := staticbin.Locate(HelperName, HelperEnv, "Helm helper", helperMaxSize)
	if err != nil {
		return true, err
	}
	args := []string{"uninstall", "--namespace", ns, "--timeout", timeout.String()}
	if h.inCluster {
		args = append(args, "--in-cluster")
	} else {
		if h.kubeconfig != "" {
			args = append(args, "--kubeconfig", h.kubeconfig)
		}
		args = append(args, "--context", h.context)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--", release)...)
	stderr := &backends.CappedBuffer{Max: helperMaxStderr}
	cmd.Stderr = stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return true, fmt.Errorf("helm uninstall %s/%s: %w", ns, release, ctx.Err())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == HelperExitNotFound {
		return false, nil
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = fmt.Sprintf("%s: %v", bin, err)
		}
		return true, fmt.Errorf("helm uninstall %s/%s: %s", ns, release, redact.Message(msg))
	}
	return true, nil
}

// noUninstaller stands in when a backend was built from a bare REST config with no uninstaller:
// a release with a Helm record cannot be torn down by it.
type noUninstaller struct{}

func (noUninstaller) UninstallRelease(_ context.Context, ns, release string, _ time.Duration) (bool, error) {
	return true, fmt.Errorf("helm uninstall %s/%s: this backend was given no Helm uninstaller (Options.Uninstaller)", ns, release)
}

package kubernetes

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
)

// A backend opened from a kubeconfig tears a Helm release down through the helper binary, found
// through RANGEKEEPER_HELM and given the kubeconfig file and context (it reads the credentials
// itself); Helm's "no such release" comes back as found=false, and a helper's failure carries
// its reason.
func TestClusterTeardownThroughTheHelmHelper(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	t.Setenv(HelperEnv, buildHelmHelper(t))
	b, err := Open(Options{Kubeconfig: c.Kubeconfig, Context: "envtest", Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.uninstaller.(helperUninstaller); !ok {
		t.Fatalf("Open's uninstaller is %T; want the Helm helper", b.uninstaller)
	}
	r := release{name: newReleaseName(), task: "t", sample: "h"}
	install(t, b, ns, r)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := b.Teardown(ctx, b.Name()+"/"+ns+"/"+r.name, backends.TeardownOptions{Timeout: 2 * time.Minute}); err != nil {
		t.Fatalf("teardown through the helper: %v", err)
	}
	assertReleaseGone(t, c, ns, r.name)

	if found, err := b.uninstaller.UninstallRelease(ctx, ns, r.name, time.Minute); found || err != nil {
		t.Errorf("uninstall of a release Helm no longer knows = found %v, %v; want not found and no error", found, err)
	}
	bad := helperUninstaller{kubeconfig: c.Kubeconfig, context: "nosuchcontext"}
	if _, err := bad.UninstallRelease(ctx, ns, r.name, time.Minute); err == nil || !strings.Contains(err.Error(), `no context "nosuchcontext"`) {
		t.Errorf("a failing helper's error = %v; want its reason (the missing context)", err)
	}
}

// Without the helper, a teardown says what is missing and how to get it.
func TestMissingHelmHelperSaysHowToBuildIt(t *testing.T) {
	t.Setenv(HelperEnv, filepath.Join(t.TempDir(), "absent"))
	_, err := helperUninstaller{context: "c"}.UninstallRelease(context.Background(), "ns", "rel", time.Minute)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), HelperEnv) {
		t.Fatalf("err = %v; want not found, naming `make build` and %s", err, HelperEnv)
	}
}

// buildHelmHelper builds cmd/rangekeeper-helm as the test binary was built (-race under `make
// test`), so the build cache already holds its packages.
func buildHelmHelper(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), HelperName)
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "github.com/rangekeeper/rangekeeper/cmd/"+HelperName)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", HelperName, err, b)
	}
	return out
}

// Package kubetest runs a real Kubernetes control plane for integration tests: kube-apiserver
// and etcd (envtest), kwok as the kubelet (with ClusterExec so pods/exec works and ClusterLogs
// so pods/log serves a file the test writes), and
// kube-scheduler plus kube-controller-manager so StatefulSets produce pods.
package kubetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Binaries the cluster needs in the assets directory (built by `make testbin`).
var Binaries = []string{"etcd", "kube-apiserver", "kwok", "kube-scheduler", "kube-controller-manager", "kwok-stages.yaml"}

// NodeName is the kwok node every test pod runs on.
const NodeName = "kwok-node-0"

// Cluster is a running control plane.
type Cluster struct {
	Config     *rest.Config
	Client     kubernetes.Interface
	Kubeconfig string // admin kubeconfig file; its context is "envtest"
	ExecDir    string // kwok runs exec'd commands as local processes in this directory

	logsMu sync.Mutex // held by the test that owns the pod log files (see PodLogs)

	env    *envtest.Environment
	dir    string
	procs  []*exec.Cmd
	reaper *reaper
}

// AssetsDir returns $KUBEBUILDER_ASSETS when it holds every binary, and which one is missing
// otherwise.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return "", errors.New("KUBEBUILDER_ASSETS is not set (run `make testbin`, or `make test`)")
	}
	for _, b := range Binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s is missing from KUBEBUILDER_ASSETS=%s (run `make testbin`)", b, dir)
		}
	}
	return dir, nil
}

// BuildMode reports how hack/testbin built the binaries in dir: "optimised", "quick" (compiled
// without optimisations, for a cheaper cold CI) or "unknown" (no build-mode file).
func BuildMode(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "build-mode"))
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// RequireOptimised fails for binaries built unoptimised: a benchmark against them would
// measure the missing optimisations, not rangekeeper.
func RequireOptimised(dir string) error {
	if m := BuildMode(dir); m == "quick" {
		return fmt.Errorf("the control plane in %s was built unoptimised (TESTBIN_MODE=%s, as CI does); benchmarks need `make testbin` (optimised)", dir, m)
	}
	return nil
}

var (
	shared    *Cluster
	sharedErr error
	once      sync.Once
)

// Main must be called from TestMain. It turns the process into the reaper when re-executed as
// one, runs the tests, and stops the shared cluster (if one was started) afterwards.
func Main(m *testing.M) {
	ReaperMain()
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	os.Exit(code)
}

// Need returns the package's shared cluster, starting it on first use. Without the binaries
// the test is skipped, except under CI=true where it fails.
func Need(t testing.TB) *Cluster {
	t.Helper()
	dir, err := AssetsDir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubetest: CI=true but the Kubernetes test binaries are unavailable: %v", err)
		}
		t.Skipf("kubetest: %v", err)
	}
	if _, bench := t.(*testing.B); bench {
		if err := RequireOptimised(dir); err != nil {
			t.Fatalf("kubetest: %v", err)
		}
	}
	once.Do(func() { shared, sharedErr = Start(dir) })
	if sharedErr != nil {
		t.Fatalf("kubetest: %v", sharedErr)
	}
	return shared
}

// ReaperMain turns the process into the reaper (and exits) when it was re-executed as one; it
// returns at once otherwise. Main calls it; a program other than a test that calls Start (such
// as the bench-fleet harness) must call it first thing in main.
func ReaperMain() {
	if os.Getenv(reaperEnv) != "" {
		runReaper()
		os.Exit(0)
	}
}

// Options tune the control plane Start brings up.
type Options struct {
	// NoControllers skips kube-scheduler and kube-controller-manager: enough for bare pods
	// bound to a node, and two fewer processes competing for the CPU in benchmarks.
	NoControllers bool
}

// Start brings up the control plane from the binaries in dir (about 5 s).
func Start(dir string) (*Cluster, error) { return StartWith(dir, Options{}) }

// StartWith is Start with options.
func StartWith(dir string, o Options) (c *Cluster, err error) {
	c = &Cluster{}
	if c.reaper, err = startReaper(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	if c.dir, err = os.MkdirTemp("", "rangekeeper-kubetest-"); err != nil {
		return c, err
	}
	c.reaper.watchDir(c.dir)
	c.ExecDir = filepath.Join(c.dir, "exec")
	if err := os.MkdirAll(c.ExecDir, 0o755); err != nil {
		return c, err
	}
	c.env = &envtest.Environment{
		BinaryAssetsDirectory: dir,
		// The default 20 s is too short on a loaded 2-core machine.
		ControlPlaneStartTimeout: 2 * time.Minute,
		CRDInstallOptions:        envtest.CRDInstallOptions{CRDs: []*apiextv1.CustomResourceDefinition{ciliumCRD()}},
	}
	// Keep envtest's certificates and etcd data under c.dir, which Stop and the reaper remove.
	c.env.ControlPlane.APIServer = &envtest.APIServer{CertDir: filepath.Join(c.dir, "apiserver")}
	c.env.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(c.dir, "etcd")}
	for _, d := range []string{"apiserver", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o700); err != nil {
			return c, err
		}
	}
	c.env.ControlPlane.GetAPIServer().Configure().
		// Pods in the chart reference the "default" ServiceAccount; KCM creates it, but without
		// its token controller (no signing key here) the admission plugin would wait on tokens.
		Append("disable-admission-plugins", "ServiceAccount")
	c.Config, err = c.env.Start()
	for _, pid := range childPIDs() { // etcd and kube-apiserver, started by envtest
		if pid != c.reaper.cmd.Process.Pid {
			c.reaper.watchPID(pid)
		}
	}
	if d := c.env.WebhookInstallOptions.LocalServingCertDir; d != "" {
		c.reaper.watchDir(d) // envtest always makes this one under $TMPDIR
	}
	if err != nil {
		return c, fmt.Errorf("envtest: %w", err)
	}
	c.Config.QPS, c.Config.Burst = 200, 400
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return c, err
	}
	user, err := c.env.AddUser(envtest.User{Name: "rangekeeper-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return c, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return c, err
	}
	c.Kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		return c, err
	}
	if err := c.startComponents(dir, o); err != nil {
		return c, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c, c.prepare(ctx)
}

// startComponents runs kwok and, unless o.NoControllers, the scheduler and the controller manager.
func (c *Cluster) startComponents(dir string, o Options) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	execCfg := filepath.Join(c.dir, "kwok-exec.yaml")
	if err := os.WriteFile(execCfg, []byte(fmt.Sprintf(`kind: ClusterExec
apiVersion: kwok.x-k8s.io/v1alpha1
metadata:
  name: local
spec:
  execs:
  - local:
      workDir: %s
`, c.ExecDir)), 0o644); err != nil {
		return err
	}
	logsCfg, err := c.writeLogsConfig()
	if err != nil {
		return err
	}
	p := strconv.Itoa(port)
	if err := c.run(filepath.Join(dir, "kwok"), "kwok", "--kubeconfig="+c.Kubeconfig, "--manage-all-nodes=true",
		"--config="+filepath.Join(dir, "kwok-stages.yaml"), "--config="+execCfg, "--config="+logsCfg,
		"--node-lease-duration-seconds=40", "--cidr=10.244.0.0/16",
		"--node-ip=127.0.0.1", "--node-port="+p, "--server-address=127.0.0.1:"+p); err != nil {
		return err
	}
	if o.NoControllers {
		return nil
	}
	if err := c.run(filepath.Join(dir, "kube-scheduler"), "kube-scheduler", "--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false", "--secure-port=0"); err != nil {
		return err
	}
	return c.run(filepath.Join(dir, "kube-controller-manager"), "kube-controller-manager", "--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false", "--secure-port=0", "--controllers=*,-serviceaccount-token",
		"--cluster-cidr=10.244.0.0/16", "--service-cluster-ip-range=10.0.0.0/24")
}

// run starts one component in its own process group, killed with us (Pdeathsig) and recorded
// with the reaper; its output goes to <dir>/<name>.log.
func (c *Cluster) run(bin, name string, args ...string) error {
	log, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "HOME="+c.dir) // kwok also reads ~/.kwok/kwok.yaml
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	_ = log.Close()
	c.reaper.watchPID(cmd.Process.Pid)
	c.procs = append(c.procs, cmd)
	return nil
}

// prepare creates the kwok node and the cluster objects the agent-env chart expects (a gvisor
// RuntimeClass; Cilium's CRD is installed by envtest), then waits for the node.
func (c *Cluster) prepare(ctx context.Context) error {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
	if _, err := c.Client.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create runtimeclass: %w", err)
	}
	return c.AddNode(ctx, NodeName)
}

// AddNode creates one more kwok node (room for 20,000 pods) and waits until kwok reports it
// Ready. NodeName exists from the start.
func (c *Cluster) AddNode(ctx context.Context, name string) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Capacity:    bigNode(),
			Allocatable: bigNode(),
		},
	}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("kwok node %s never became Ready (see %s/kwok.log): %w", name, c.dir, err)
	}
	return nil
}

func bigNode() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse("20000"),
	}
}

// Namespace creates a uniquely named, labelled namespace for one test, deleted when the test
// ends (KCM finalises the deletion).
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "rk-", Labels: map[string]string{"dev.rangekeeper.test": "1"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// UserKubeconfig writes a kubeconfig (context "envtest") for a new user with the given groups
// and returns its path; with no groups the user has no RBAC rights at all.
func (c *Cluster) UserKubeconfig(name string, groups ...string) (string, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	p := filepath.Join(c.dir, name+".kubeconfig")
	return p, os.WriteFile(p, kc, 0o600)
}

// Stop kills the components, stops envtest and removes the temporary files.
func (c *Cluster) Stop() {
	for _, p := range c.procs {
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
	}
	for _, p := range c.procs {
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if c.env != nil {
		_ = c.env.Stop()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
	if c.reaper != nil {
		c.reaper.done()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ciliumCRD is a schemaless stand-in for Cilium's CiliumNetworkPolicy CRD, so the agent-env
// chart installs and the backend can read its policies (there is no CNI: nothing enforces them).
func ciliumCRD() *apiextv1.CustomResourceDefinition {
	preserve := true
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "ciliumnetworkpolicies.cilium.io"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "cilium.io",
			Names: apiextv1.CustomResourceDefinitionNames{Kind: "CiliumNetworkPolicy", ListKind: "CiliumNetworkPolicyList",
				Plural: "ciliumnetworkpolicies", Singular: "ciliumnetworkpolicy", ShortNames: []string{"cnp"}},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v2", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}},
			}},
		},
	}
}

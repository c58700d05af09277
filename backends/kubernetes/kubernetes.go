// Package kubernetes discovers Inspect's agent-env Helm releases as sandboxes through client-go
// informers and acts on exactly one release at a time (Helm uninstall, reset, pods/exec).
package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Labels and annotations that Inspect's agent-env chart and Helm put on a release's objects.
const (
	LabelInstance   = "app.kubernetes.io/instance" // the Helm release name
	LabelService    = "inspect/service"            // marks a pod as a sandbox member
	LabelSample     = "inspectSampleUUID"
	LabelChartVer   = "aisi.gov.uk/k8s-sandbox-version"
	AnnotationTask  = "inspectTaskName"
	HelmInspectFlag = "inspectSandbox" // Helm *release* label (on the release record), value "true"
	helmOwnerLabel  = "owner"          // Helm's storage driver labels: owner=helm, name, version, status
)

// Options selects one kubeconfig context (or the in-cluster config) and its namespaces.
type Options struct {
	Kubeconfig string   // path; empty means $KUBECONFIG or ~/.kube/config
	Context    string   // empty means the kubeconfig's current context
	Namespaces []string // empty or "*" means every namespace the operator may list
	InCluster  bool
	// Workers bounds how many teardowns run at once (default 8, Inspect's own default), however
	// many the caller starts.
	Workers int
	// HealthInterval is how often Watch checks that the API server still answers (default
	// 10 s). Informers retry a refused connection forever; two failed checks in a row end
	// Watch so the supervisor can report the outage and reconnect.
	HealthInterval time.Duration
	// RuntimePolicy grades K8S-H18 (the config's lint.policy.sandboxed_runtime; "" is
	// recommended), together with the RuntimeClasses the cluster offers.
	RuntimePolicy catalog.RuntimePolicy
	// Uninstaller runs Helm's uninstall for a teardown. Open defaults to the Helm helper
	// (rangekeeper-helm) on the same kubeconfig context; NewForConfig has no default.
	Uninstaller ReleaseUninstaller
	// Input, when set, paces the initial lists (pods, policies) and the fleet's reset after
	// them while the operator presses keys (internal/inputfirst); New sets the process's signal.
	Input *inputfirst.Signal
}

// Backend is one Kubernetes context. It satisfies backends.Backend, TearDowner, Resetter,
// Executor, Copier, Explainer, and Snapshotter and Reverter (CSI VolumeSnapshots, volsnap.go).
type Backend struct {
	context     string
	namespaces  []string // nil means all namespaces
	rc          *rest.Config
	cs          k8s.Interface
	md          metadata.Interface
	dyn         dynamic.Interface
	health      time.Duration
	disc        discovery.CachedDiscoveryInterface
	mapper      meta.RESTMapper
	workers     int
	teardowns   chan struct{} // semaphore: at most workers teardowns in flight
	snap        snapCap       // cached snapshot capability (volsnap.go)
	policy      catalog.RuntimePolicy
	uninstaller ReleaseUninstaller
	input       *inputfirst.Signal // paces the initial load while the operator types (nil: never)
}

var (
	_ backends.Backend    = (*Backend)(nil)
	_ backends.TearDowner = (*Backend)(nil)
	_ backends.Resetter   = (*Backend)(nil)
	_ backends.Executor   = (*Backend)(nil)
	_ backends.Copier     = (*Backend)(nil)
	_ backends.Explainer  = (*Backend)(nil)
)

// New returns one Backend per configured context (the current context when none is listed);
// policy grades the sandboxed-runtime rule.
func New(cfg config.KubernetesConfig, policy catalog.RuntimePolicy) ([]*Backend, error) {
	if cfg.InCluster {
		b, err := Open(Options{InCluster: true, Namespaces: cfg.Namespaces, RuntimePolicy: policy, Input: &inputfirst.Operator})
		if err != nil {
			return nil, err
		}
		return []*Backend{b}, nil
	}
	contexts := cfg.Contexts
	if len(contexts) == 0 {
		contexts = []string{""}
	}
	var out []*Backend
	for _, c := range contexts {
		b, err := Open(Options{Kubeconfig: cfg.Kubeconfig, Context: c, Namespaces: cfg.Namespaces, RuntimePolicy: policy,
			Input: &inputfirst.Operator})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Open builds a Backend for one context. It does not contact the API server: Watch does, and
// reports an unreachable server or an RBAC refusal there.
func Open(o Options) (*Backend, error) {
	name, rc, err := LoadConfig(o)
	if err != nil {
		return nil, err
	}
	if o.Uninstaller == nil {
		o.Uninstaller = helperUninstaller{kubeconfig: o.Kubeconfig, context: name, inCluster: o.InCluster}
	}
	return NewForConfig(name, rc, o)
}

// LoadConfig resolves Options' kubeconfig context (the current one when none is named) or the
// in-cluster config to a context name and its REST config.
func LoadConfig(o Options) (name string, rc *rest.Config, err error) {
	if o.InCluster {
		rc, err = rest.InClusterConfig()
		if err != nil {
			return "", nil, fmt.Errorf("k8s: in-cluster config: %w", err)
		}
		return "in-cluster", rc, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return "", nil, fmt.Errorf("k8s: kubeconfig %s: %w", kubeconfigName(o.Kubeconfig), err)
	}
	name = o.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if _, ok := raw.Contexts[name]; !ok || name == "" {
		return "", nil, fmt.Errorf("k8s: kubeconfig %s has no context %q", kubeconfigName(o.Kubeconfig), name)
	}
	rc, err = cc.ClientConfig()
	if err != nil {
		return "", nil, fmt.Errorf("k8s:%s: %w", name, err)
	}
	return name, rc, nil
}

// NewForConfig builds a Backend named "k8s:<name>" from a REST config (Options.Namespaces and
// Options.Workers apply; the kubeconfig fields are ignored).
func NewForConfig(name string, rc *rest.Config, o Options) (*Backend, error) {
	rc = rest.CopyConfig(rc)
	// The defaults (QPS 5) would make the initial list of thousands of pods and bulk teardown crawl.
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 50, 100
	}
	b := &Backend{context: name, rc: rc, workers: o.Workers, health: o.HealthInterval, policy: o.RuntimePolicy, uninstaller: o.Uninstaller,
		input: o.Input}
	if b.uninstaller == nil {
		b.uninstaller = noUninstaller{}
	}
	if b.health <= 0 {
		b.health = 10 * time.Second
	}
	if b.workers <= 0 {
		b.workers = 8
	}
	b.teardowns = make(chan struct{}, b.workers)
	for _, ns := range o.Namespaces {
		if ns == "*" || ns == metav1.NamespaceAll {
			b.namespaces = nil
			break
		}
		b.namespaces = append(b.namespaces, ns)
	}
	var err error
	if b.cs, err = k8s.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("k8s:%s: %w", name, err)
	}
	if b.md, err = metadata.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("k8s:%s: %w", name, err)
	}
	if b.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("k8s:%s: %w", name, err)
	}
	b.disc = memory.NewMemCacheClient(b.cs.Discovery())
	b.mapper = restmapper.NewDeferredDiscoveryRESTMapper(b.disc)
	return b, nil
}

func kubeconfigName(p string) string {
	if p != "" {
		return p
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return env
	}
	return "~/.kube/config"
}

// Name is "k8s:<context>".
func (b *Backend) Name() string { return "k8s:" + b.context }

// Kind is backends.KindKubernetes.
func (b *Backend) Kind() backends.Kind { return backends.KindKubernetes }

// Context is the kubeconfig context this backend talks to.
func (b *Backend) Context() string { return b.context }

// Unsupported explains the actions Kubernetes cannot honestly offer. Snapshot and revert need
// the VolumeSnapshot API and a VolumeSnapshotClass; whether a given release has PVCs is only
// known per release (UnsupportedFor, and the actions themselves refuse).
func (b *Backend) Unsupported(a backends.Action) string {
	switch a {
	case backends.ActionSnapshot, backends.ActionRevert:
		// Only PVCs can be snapshotted (CSI VolumeSnapshots); the answer is cached (volsnap.go).
		if why := b.snapshotUnsupported(); why != "" {
			return string(a) + ": " + why + " — reset available"
		}
	}
	return ""
}

// sandboxID is "k8s:<context>/<namespace>/<release>".
func (b *Backend) sandboxID(ns, release string) string {
	return b.Name() + "/" + ns + "/" + release
}

// parseID splits a sandbox ID of this backend (backends.ParseID: contexts may contain "/").
func (b *Backend) parseID(id string) (ns, release string, err error) {
	if !strings.HasPrefix(id, b.Name()+"/") {
		return "", "", fmt.Errorf("%s: %w: %q is not a sandbox of this backend", b.Name(), backends.ErrNotFound, id)
	}
	pid, err := backends.ParseID(id)
	if err != nil || pid.Backend() != b.Name() {
		return "", "", fmt.Errorf("%s: %w: malformed sandbox ID %q (want %s/<namespace>/<release>)", b.Name(), backends.ErrNotFound, id, b.Name())
	}
	return pid.Path[0], pid.Path[1], nil
}

// explainAPIError turns RBAC refusals into a message that says what to grant or configure.
func (b *Backend) explainAPIError(verb, resource, ns string, err error) error {
	where := "in all namespaces"
	if ns != "" {
		where = fmt.Sprintf("in namespace %q", ns)
	}
	if apierrors.IsForbidden(err) {
		hint := ""
		if ns == "" {
			hint = "; or list the namespaces you may read under kubernetes.namespaces"
		}
		return fmt.Errorf("%s: RBAC forbids %s %s %s: grant %q on %s%s: %w", b.Name(), verb, resource, where, verb, resource, hint, err)
	}
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("%s: the API server rejected the credentials of context %q: %w", b.Name(), b.context, err)
	}
	return fmt.Errorf("%s: %s %s %s: %w", b.Name(), verb, resource, where, err)
}

// errNoShell reports an image without /bin/sh, which exec-based copy and the probe need.
var errNoShell = errors.New("the container image has no /bin/sh: copy and the escape probe need a shell in the first container")

// selector for the pods of one release that Inspect counts as sandbox members.
func releaseSelector(release string) string {
	return LabelInstance + "=" + release + "," + LabelService
}

// listNamespaces is the namespaces to watch; []string{""} means all.
func (b *Backend) listNamespaces() []string {
	if len(b.namespaces) == 0 {
		return []string{metav1.NamespaceAll}
	}
	return b.namespaces
}

// preflight checks reachability and RBAC once, so Watch fails fast with a clear message
// instead of an informer retrying forever.
func (b *Backend) preflight(ctx context.Context) (helmSecrets bool, err error) {
	helmSecrets = true
	for _, ns := range b.listNamespaces() {
		if _, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: LabelService}); err != nil {
			return false, b.explainAPIError("list", "pods", ns, err)
		}
		// Release records are optional: without them Inspect's releases are recognised by their
		// pods' inspectTaskName annotation. Only metadata is read, never a secret's data.
		if _, err := b.md.Resource(secretsGVR).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: helmOwnerLabel + "=helm"}); err != nil {
			if !apierrors.IsForbidden(err) {
				return false, b.explainAPIError("list", "secrets", ns, err)
			}
			helmSecrets = false
		}
	}
	return helmSecrets, nil
}

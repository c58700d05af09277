// Package helmrelease runs the Helm SDK on one Kubernetes context: the uninstall a teardown
// does (Inspect's own way of ending a sandbox release) and the action configuration that tests
// install releases with. Only the rangekeeper-helm helper and tests link it: the Helm SDK's
// package initialisation (its linter's validators, kubectl's scheme, controller-runtime, oras)
// costs ~26 ms of every start of a binary that imports it, and the workbench is started far more
// often than it tears a release down (the first frame).
package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client runs Helm actions against the cluster of one REST config.
type Client struct {
	rc     *rest.Config
	disc   discovery.CachedDiscoveryInterface
	mapper meta.RESTMapper
}

// New prepares a Client; it does not contact the API server.
func New(rc *rest.Config) (*Client, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	disc := memory.NewMemCacheClient(dc)
	return &Client{rc: rest.CopyConfig(rc), disc: disc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc)}, nil
}

// Configuration is a Helm action configuration for namespace ns, with release records in
// Secrets (Helm's default driver, the one Inspect uses).
func (c *Client) Configuration(ns string) (*action.Configuration, error) {
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if err := cfg.Init(restGetter{c: c, ns: ns}, ns, "secret"); err != nil {
		return nil, err
	}
	return cfg, nil
}

// UninstallRelease uninstalls release in ns as Inspect does and waits, up to timeout, for its
// objects to be gone. found is false, with a nil error, when Helm has no record of it.
func (c *Client) UninstallRelease(ctx context.Context, ns, release string, timeout time.Duration) (found bool, err error) {
	cfg, err := c.Configuration(ns)
	if err != nil {
		return false, fmt.Errorf("helm: %w", err)
	}
	u := action.NewUninstall(cfg)
	u.WaitStrategy = kube.StatusWatcherStrategy
	u.Timeout = timeout
	done := make(chan error, 1)
	// The Helm SDK's Run takes no context; its own timeout bounds it, and ctx lets the caller
	// stop waiting.
	go func() { _, err := u.Run(release); done <- err }()
	select {
	case err = <-done:
	case <-ctx.Done():
		return true, fmt.Errorf("helm uninstall %s/%s: %w", ns, release, ctx.Err())
	}
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("helm uninstall %s/%s: %w", ns, release, err)
	}
	return true, nil
}

// restGetter hands the Helm SDK the client's REST config and its in-memory discovery cache, so
// Helm writes nothing under ~/.kube/cache.
type restGetter struct {
	c  *Client
	ns string
}

func (g restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.c.rc), nil }

func (g restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.c.disc, nil
}

func (g restGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.c.mapper, nil }

// ToRawKubeConfigLoader only answers Namespace(): every other value comes from ToRESTConfig.
func (g restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(clientcmdapi.Config{}, &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.ns}})
}

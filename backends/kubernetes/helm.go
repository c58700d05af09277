package kubernetes

import (
	"log/slog"

	"helm.sh/helm/v4/pkg/action"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter hands the Helm SDK our REST config (kubeconfig context or in-cluster) and shares
// the backend's in-memory discovery cache, so Helm writes nothing under ~/.kube/cache.
type restGetter struct {
	b  *Backend
	ns string
}

func (g restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.b.rc), nil }

func (g restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.b.disc, nil
}

func (g restGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.b.mapper, nil }

// ToRawKubeConfigLoader only answers Namespace(): every other value comes from ToRESTConfig.
func (g restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(clientcmdapi.Config{}, &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.ns}})
}

// HelmConfig returns a Helm SDK action configuration for one namespace of this backend, with
// release records in Secrets (Helm's default driver, the one Inspect uses).
func (b *Backend) HelmConfig(ns string) (*action.Configuration, error) {
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if err := cfg.Init(restGetter{b: b, ns: ns}, ns, "secret"); err != nil {
		return nil, err
	}
	return cfg, nil
}

package cli

import (
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes"
	"github.com/rangekeeper/rangekeeper/config"
)

// The Kubernetes family registers its builder from here, as wire.go's backendBuilders invites.
func init() { backendBuilders = append(backendBuilders, kubernetesBackends) }

// kubernetesBackends builds one backend per configured kubeconfig context (or the in-cluster
// config) when kubernetes.enabled is set. Nothing is contacted here: Watch reports an
// unreachable API server or an RBAC refusal.
func kubernetesBackends(_ *factory, cfg *config.Config) ([]backends.Backend, error) {
	if !cfg.Kubernetes.Enabled {
		return nil, nil
	}
	bs, err := kubernetes.New(cfg.Kubernetes, cfg.Lint.Policy.SandboxedRuntime)
	if err != nil {
		return nil, err
	}
	out := make([]backends.Backend, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out, nil
}

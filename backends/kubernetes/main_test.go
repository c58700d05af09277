package kubernetes

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
)

// TestMain lets kubetest stop the shared control plane after the tests and reap it if the
// test binary dies.
func TestMain(m *testing.M) { kubetest.Main(m) }

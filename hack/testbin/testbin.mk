# Kubernetes test binaries (etcd, kube-apiserver, kwok, kube-scheduler, kube-controller-manager)
# for backends/kubernetes' integration tests, built from the separate Go module in hack/testbin.
# Rebuilt only when missing, older than the module files or the build script, or built in the other
# mode: a cold build takes about 8 minutes on 2 idle cores, a warm one seconds.
# TESTBIN_MODE=quick (set by .ci/run) compiles them unoptimised, about 15 % less CPU for a cold
# CI; benchmarks need the default, optimised (see build.sh).
TESTBIN := $(CURDIR)/bin/k8s
TESTBIN_MODE ?= optimised

$(TESTBIN)/.stamp-$(TESTBIN_MODE): hack/testbin/go.mod hack/testbin/go.sum hack/testbin/build.sh hack/testbin/tools.go
	TESTBIN=$(TESTBIN) TESTBIN_MODE=$(TESTBIN_MODE) hack/testbin/build.sh

.PHONY: testbin
testbin: $(TESTBIN)/.stamp-$(TESTBIN_MODE)

K8S_TEST_PREREQS += testbin
K8S_TEST_ENV += KUBEBUILDER_ASSETS=$(TESTBIN)

# Kubernetes test binaries (etcd, kube-apiserver, kwok, kube-scheduler, kube-controller-manager)
# for backends/kubernetes' integration tests, built from the separate Go module in hack/testbin.
# Rebuilt only when missing or older than the module files or the build script: a cold build
# takes about 8 minutes on 2 cores, a warm one a few seconds.
TESTBIN := $(CURDIR)/bin/k8s

$(TESTBIN)/.stamp: hack/testbin/go.mod hack/testbin/go.sum hack/testbin/build.sh hack/testbin/tools.go
	TESTBIN=$(TESTBIN) hack/testbin/build.sh

.PHONY: testbin
testbin: $(TESTBIN)/.stamp

K8S_TEST_PREREQS += testbin
K8S_TEST_ENV += KUBEBUILDER_ASSETS=$(TESTBIN)

//go:build tools

// Package testbin pins the Kubernetes test binaries (etcd, kube-apiserver, kwok, kube-scheduler,
// kube-controller-manager) that the Kubernetes backend's integration tests run.
package testbin

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)

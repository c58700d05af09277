#!/usr/bin/env bash
# Builds the Kubernetes test binaries (etcd, kube-apiserver, kwok, kube-scheduler,
# kube-controller-manager) and kwok's default stages into $TESTBIN (default <repo>/bin/k8s).
# Cold: about 8 minutes and 3 GB of Go build cache on 2 cores; warm: a few seconds.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${TESTBIN:-$(cd ../.. && pwd)/bin/k8s}; mkdir -p "$OUT"
K8S=$(go list -m -f '{{.Version}}' k8s.io/kubernetes); MINOR=$(echo "$K8S" | cut -d. -f2)
# Without these -X flags /version reports v0.0.0-master and client-go's discovery is confused.
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean"
build() { # build <output name> <ldflags> <package>: write to a temp file, then rename, so an
          # interrupted build never leaves a truncated binary that make would take as up to date.
	go build -trimpath -ldflags="$2" -o "$OUT/.$1.tmp" "$3" && mv -f "$OUT/.$1.tmp" "$OUT/$1"
}
build etcd "-s -w" go.etcd.io/etcd/server/v3
build kube-apiserver "$LDF" k8s.io/kubernetes/cmd/kube-apiserver
build kwok "-s -w" sigs.k8s.io/kwok/cmd/kwok
build kube-scheduler "$LDF" k8s.io/kubernetes/cmd/kube-scheduler
build kube-controller-manager "$LDF" k8s.io/kubernetes/cmd/kube-controller-manager
KWOK_DIR=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)   # default Stage YAMLs ship inside the module
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  echo "---"; cat "$KWOK_DIR/kustomize/stage/$f"; done > "$OUT/kwok-stages.yaml"
# The stamp is written last: make rebuilds whenever it is missing or older than the inputs.
date -u +%FT%TZ > "$OUT/.stamp"

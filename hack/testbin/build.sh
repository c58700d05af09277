#!/usr/bin/env bash
# Builds the Kubernetes test binaries (etcd, kube-apiserver, kwok, kube-scheduler,
# kube-controller-manager) and kwok's default stages into $TESTBIN (default <repo>/bin/k8s).
# All five come from one `go build` so the compiler shares the packages they have in common and
# overlaps compiling one with linking another (cold: about 8 minutes and 3 GB of Go build cache on
# 2 idle cores; warm: seconds). Binaries are replaced only after the whole build succeeded, so an
# interrupted build never leaves a truncated binary that make would take as up to date.
#
# TESTBIN_MODE=optimised (the default) or quick. quick compiles everything outside the standard
# library without optimisations or inlining (-N -l): less compile CPU on a cold machine (in a cold
# CI run 1,149 CPU-s against 1,345; -24 % for client-go alone), and the Kubernetes tests take the
# same time and CPU against it (52 s, 53 CPU-s either way; the control plane idles in them).
# Benchmarks need the optimised build and refuse a quick one (kubetest.RequireOptimised). The mode
# is recorded in $OUT/build-mode (for kubetest) and in the stamp's name (for make: switching modes
# rebuilds).
set -euo pipefail
MODE=${TESTBIN_MODE:-optimised}
# quick also keeps file paths (no -trimpath), so the standard library compiles as plain `go build`
# and `go install` (staticcheck's, in CI) compile it: once for both.
case "$MODE" in
optimised) FLAGS=(-trimpath) ;;
quick) FLAGS=(-gcflags='all=-N -l' -gcflags='std=') ;; # the later pattern wins for std: the runtime stays optimised
*) echo "build.sh: TESTBIN_MODE=$MODE: want optimised or quick" >&2; exit 2 ;;
esac
cd "$(dirname "$0")"
OUT=${TESTBIN:-$(cd ../.. && pwd)/bin/k8s}; mkdir -p "$OUT"
K8S=$(go list -m -f '{{.Version}}' k8s.io/kubernetes); MINOR=$(echo "$K8S" | cut -d. -f2)
# Without these -X flags /version reports v0.0.0-master and client-go's discovery is confused
# (they name symbols that etcd and kwok do not have, which the linker ignores).
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean"
STAGE="$OUT/.build"; rm -rf "$STAGE" "$OUT"/.stamp* "$OUT/build-mode"; mkdir -p "$STAGE"
go build "${FLAGS[@]}" -ldflags="$LDF" -o "$STAGE/" \
	go.etcd.io/etcd/server/v3 \
	k8s.io/kubernetes/cmd/kube-apiserver \
	sigs.k8s.io/kwok/cmd/kwok \
	k8s.io/kubernetes/cmd/kube-scheduler \
	k8s.io/kubernetes/cmd/kube-controller-manager
mv -f "$STAGE/server" "$STAGE/etcd" # go names the etcd server binary after "server" (…/server/v3)
for b in etcd kube-apiserver kwok kube-scheduler kube-controller-manager; do mv -f "$STAGE/$b" "$OUT/$b"; done
rmdir "$STAGE"
KWOK_DIR=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)   # default Stage YAMLs ship inside the module
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  echo "---"; cat "$KWOK_DIR/kustomize/stage/$f"; done > "$OUT/kwok-stages.yaml"
echo "$MODE" > "$OUT/build-mode"
# The stamp is written last: make rebuilds whenever it is missing or older than the inputs.
date -u +%FT%TZ > "$OUT/.stamp-$MODE"

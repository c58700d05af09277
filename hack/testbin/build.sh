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
#
# The binaries are also kept in a cache outside the clone, keyed on everything they are built from
# (go.mod, go.sum, tools.go, this script, the mode and the Go version): a fresh clone or a CI run
# whose runner keeps that directory (about 460 MB an entry) copies them in seconds instead of
# building them (CI caches bin/k8s this way, as the Kubernetes testing recipe advises; a cold CI
# run spends about 1,300 of its 3,600 CPU-s on this build). TESTBIN_CACHE names the directory
# (default ${XDG_CACHE_HOME:-~/.cache}/rangekeeper/testbin); TESTBIN_CACHE=off disables it.
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
BINARIES=(etcd kube-apiserver kwok kube-scheduler kube-controller-manager)
FILES=("${BINARIES[@]}" kwok-stages.yaml) # what the cache holds
CACHE=${TESTBIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rangekeeper/testbin}
KEY=$( { cat go.mod go.sum tools.go build.sh; echo "$MODE $(go env GOVERSION GOOS GOARCH)"; } | sha256sum | cut -c1-32)
# finish records the mode and writes the stamp, last: make rebuilds whenever the stamp is missing
# or older than the inputs.
finish() {
	echo "$MODE" > "$OUT/build-mode"
	date -u +%FT%TZ > "$OUT/.stamp-$MODE"
}
rm -f "$OUT"/.stamp* "$OUT/build-mode"
if [ "$CACHE" != off ] && [ -f "$CACHE/$KEY/complete" ]; then
	for f in "${FILES[@]}"; do cp -f "$CACHE/$KEY/$f" "$OUT/.$f.tmp" && mv -f "$OUT/.$f.tmp" "$OUT/$f"; done
	touch "$CACHE/$KEY/complete" 2>/dev/null || true # most recently used: pruned last (a read-only cache is fine)
	echo "testbin: $MODE binaries from the cache $CACHE/$KEY"
	finish
	exit 0
fi
K8S=$(go list -m -f '{{.Version}}' k8s.io/kubernetes); MINOR=$(echo "$K8S" | cut -d. -f2)
# Without these -X flags /version reports v0.0.0-master and client-go's discovery is confused
# (they name symbols that etcd and kwok do not have, which the linker ignores).
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean"
STAGE="$OUT/.build"; rm -rf "$STAGE"; mkdir -p "$STAGE"
go build "${FLAGS[@]}" -ldflags="$LDF" -o "$STAGE/" \
	go.etcd.io/etcd/server/v3 \
	k8s.io/kubernetes/cmd/kube-apiserver \
	sigs.k8s.io/kwok/cmd/kwok \
	k8s.io/kubernetes/cmd/kube-scheduler \
	k8s.io/kubernetes/cmd/kube-controller-manager
mv -f "$STAGE/server" "$STAGE/etcd" # go names the etcd server binary after "server" (…/server/v3)
for b in "${BINARIES[@]}"; do mv -f "$STAGE/$b" "$OUT/$b"; done
rmdir "$STAGE"
KWOK_DIR=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)   # default Stage YAMLs ship inside the module
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  echo "---"; cat "$KWOK_DIR/kustomize/stage/$f"; done > "$OUT/kwok-stages.yaml"
finish
# Store the build for the next clone: staged, then renamed into place, so a reader never sees a
# partial entry; a failure to store costs the next run a build, nothing more. Only the three
# entries used last are kept.
if [ "$CACHE" != off ] && mkdir -p "$CACHE" 2>/dev/null; then
	if tmp=$(mktemp -d "$CACHE/.store.XXXXXX") && cp "${FILES[@]/#/$OUT/}" "$tmp/" && touch "$tmp/complete" &&
		{ rm -rf "${CACHE:?}/$KEY"; mv "$tmp" "$CACHE/$KEY"; }; then
		echo "testbin: stored in the cache $CACHE/$KEY"
	else
		echo "testbin: warning: could not store the binaries in the cache $CACHE" >&2
		rm -rf "${tmp:-}"
	fi
	ls -1dt "$CACHE"/*/complete 2>/dev/null | tail -n +4 | while read -r old; do rm -rf "$(dirname "$old")"; done
fi

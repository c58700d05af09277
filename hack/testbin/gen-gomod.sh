#!/usr/bin/env bash
# Regenerates go.mod/go.sum for the test-binary module. Run once per Kubernetes upgrade:
#   K8S_VERSION=v1.37.2 hack/testbin/gen-gomod.sh
# k8s.io/kubernetes replaces its staging modules with ./staging paths, so a module that requires it
# must replace each of them with the published v0.X.Y release.
set -euo pipefail
K8S=${K8S_VERSION:-v1.37.2}; STAGING=v0.${K8S#v1.}
cd "$(dirname "$0")"; PROXY=$(go env GOPROXY | cut -d, -f1)
{ echo "module testbin"; echo; echo "go 1.26.0"; echo
  echo "require ("; echo "	k8s.io/kubernetes $K8S"; echo "	sigs.k8s.io/kwok ${KWOK_VERSION:-v0.8.0}"; echo ")"
  echo; echo "replace ("
  curl -fsSL "$PROXY/k8s.io/kubernetes/@v/$K8S.mod" | awk '/=> \.\/staging\/src\/k8s\.io\//{print $1}' |
  while read -r m; do curl -fsS -o /dev/null "$PROXY/$m/@v/$STAGING.info" 2>/dev/null && echo "	$m => $m $STAGING"; done
  echo ")"; } > go.mod
go mod tidy

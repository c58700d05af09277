#!/usr/bin/env bash
# Builds what bench-fleet runs into $BENCH (default <repo>/bin/bench): k9s from its own Go module
# (k9s/go.mod, never rangekeeper's), rangekeeper with the loopback-only pprof hook compiled in
# through an overlay (the sources of cmd/ stay unchanged), and the harness itself.
# Cold: a few minutes for k9s on 2 cores; warm: seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
OUT=${BENCH:-$repo/bin/bench}; mkdir -p "$OUT"

# k9s, only when its module changed since the last build.
if [[ ! -x $OUT/k9s || $here/k9s/go.sum -nt $OUT/k9s ]]; then
	ver=$(cd "$here/k9s" && go list -m -f '{{.Version}}' github.com/derailed/k9s)
	(cd "$here/k9s" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/derailed/k9s/cmd.version=$ver" \
		-o "$OUT/.k9s.tmp" github.com/derailed/k9s) && mv -f "$OUT/.k9s.tmp" "$OUT/k9s"
fi

# rangekeeper as `make build` builds it, plus the profiling hook.
overlay=$(mktemp)
trap 'rm -f "$overlay"' EXIT
printf '{"Replace":{"%s":"%s"}}\n' "$repo/cli/zz_benchfleet_profhook.go" "$here/profhook/wire.go.txt" > "$overlay"
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -overlay "$overlay" -o "$OUT/rangekeeper" ./cmd/rangekeeper)
# The demo's agent, found beside the binary (benchfleet -demo).
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$OUT/rangekeeper-demo-agent" ./demos/agent)
(cd "$repo" && go build -o "$OUT/benchfleet" ./hack/benchfleet)

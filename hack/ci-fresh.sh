#!/usr/bin/env bash
# Rehearses a new user: clones the committed HEAD into an empty temporary directory outside the
# working tree (nothing beside the clone) and runs .ci/run there, timing it.
#   hack/ci-fresh.sh          warm: the machine's Go module and build caches
#   hack/ci-fresh.sh --cold   cold: empty Go module and build caches of its own and no cached
#                             Kubernetes test binaries (as a new machine)
#   hack/ci-fresh.sh --cold-ci   as a CI runner: empty Go caches, but the Kubernetes test
#                             binaries' cache (hack/testbin/build.sh) kept, as CI keeps it
#   KEEP=1 hack/ci-fresh.sh   keep the temporary directory for inspection
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cold=0 mode=warm
case "${1:-}" in
--cold) cold=1 mode=cold ;;
--cold-ci) cold=1 mode=cold-ci
	# Resolved before the Go caches move: the machine's cache of test binaries.
	export TESTBIN_CACHE=${TESTBIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rangekeeper/testbin} ;;
"") ;;
*) echo "usage: $0 [--cold|--cold-ci]" >&2; exit 2 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rangekeeper-ci-fresh.XXXXXX")
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then
		echo "ci-fresh: kept $tmp"
	else
		chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

git clone -q --no-hardlinks "$root" "$tmp/rangekeeper"
echo "ci-fresh: $(git -C "$tmp/rangekeeper" log -1 --format='%h %s') in $tmp/rangekeeper"
if [ -n "$(git -C "$root" status --porcelain)" ]; then
	echo "ci-fresh: note: uncommitted changes in $root are not part of this rehearsal"
fi
if [ "$cold" = 1 ]; then
	export GOCACHE="$tmp/cache/go-build" GOMODCACHE="$tmp/cache/mod" XDG_CACHE_HOME="$tmp/cache" # staticcheck's too
	echo "ci-fresh: cold Go caches in $tmp/cache; Kubernetes test binaries' cache: ${TESTBIN_CACHE:-none (cold)}"
fi
# Busy CPU time of the whole machine (user+nice+system+irq+softirq, in clock ticks) shows how well
# the run used the cores: a low share means the critical path waits, not computes.
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
# The engine's daemons work for the Docker tests outside .ci/run's process tree (their short-lived
# shims, runc and fuse-overlayfs processes are not counted here).
engine_cpu() { ps -C dockerd,containerd -o times= | awk '{s += $1} END {print s + 0}'; }
start=$(date +%s)
busy0=$(busy) engine0=$(engine_cpu)
status=0
# .ci/run leads a process group of its own, so an interrupt stops every test binary it started
# (their `go test` parent dying alone would leave them running, holding their sandboxes).
setsid bash -c 'cd "$1" && exec .ci/run' ci-run "$tmp/rangekeeper" &
run=$!
interrupted() {
	kill -TERM -- "-$run" 2>/dev/null || true
	wait "$run" 2>/dev/null || true
	left=$(docker ps -aq --filter label=dev.rangekeeper.test=1 2>/dev/null | wc -l)
	echo "ci-fresh: interrupted; stopped the run's processes; $left test containers left (docker ps -a --filter label=dev.rangekeeper.test=1)" >&2
	exit 130
}
trap interrupted INT TERM
wait "$run" || status=$?
trap - INT TERM
secs=$(( $(date +%s) - start ))
cpu=$(( ($(busy) - busy0) / $(getconf CLK_TCK) )) engine=$(( $(engine_cpu) - engine0 ))
printf 'ci-fresh: %s run %s in %dm%02ds; %d CPU-seconds on %d cores (%d%% busy), %d of them in dockerd and containerd\n' \
	"$mode" "$([ $status = 0 ] && echo passed || echo "FAILED (exit $status)")" \
	$((secs / 60)) $((secs % 60)) "$cpu" "$(nproc)" $(( 100 * cpu / (secs * $(nproc) + 1) )) "$engine"
exit $status

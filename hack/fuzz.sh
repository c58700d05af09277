#!/usr/bin/env bash
# Runs every fuzz target in the repository for FUZZTIME each (default 10m), FUZZJOBS at a time
# (default 1), and stops at the first crash. Go writes a crashing input to the package's
# testdata/fuzz/<Target>/ directory, which is that target's seed corpus: the crash stays a
# regression seed once committed. A summary line per target (execs, new interesting inputs,
# result) goes to stdout and to bin/fuzz-summary.txt.
# Usage: FUZZTIME=10m FUZZJOBS=2 hack/fuzz.sh [TARGET-REGEX]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10m}
FUZZJOBS=${FUZZJOBS:-1}
only=${1:-.}
mkdir -p bin
summary=bin/fuzz-summary.txt
: >"$summary"

# pkgdir target, for every `func FuzzX(f *testing.F)` in a tracked test file.
mapfile -t targets < <(git ls-files -- '*_test.go' | xargs grep -HoE '^func Fuzz[A-Za-z0-9_]*\(' |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' | grep -E "$only" | sort -u)
if [ ${#targets[@]} -eq 0 ]; then
	echo "no fuzz targets match $only" >&2
	exit 1
fi
echo "fuzzing ${#targets[@]} targets for $FUZZTIME each, $FUZZJOBS at a time"

# With several targets at once, each gets one worker so they share the CPUs instead of fighting.
parallel=()
if [ "$FUZZJOBS" -gt 1 ]; then parallel=(-parallel 1); fi

run_one() {
	local dir=$1 target=$2 log seeds before after
	log=$(mktemp)
	seeds="$dir/testdata/fuzz/$target"
	before=$(ls "$seeds" 2>/dev/null | wc -l)
	# -timeout 0: go test's default 10m would end a 10m fuzz run as a failure.
	if $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -timeout 0 "${parallel[@]}" "./$dir" >"$log" 2>&1; then
		result=ok
	else
		result=FAIL
		after=$(ls "$seeds" 2>/dev/null | wc -l)
		# Go's coordinator can report "context deadline exceeded" as the fuzz time runs out
		# while a worker is mid-input (golang/go#75804): no input is written and nothing
		# failed. Only a written input, a panic or a test failure counts.
		if [ "$after" -eq "$before" ] && grep -q 'context deadline exceeded' "$log" &&
			! grep -qE 'panic:|Failing input written|--- FAIL: .*/' "$log"; then
			result="ok*"
		fi
	fi
	line=$(grep -E 'fuzz: elapsed' "$log" | tail -1 || true)
	printf '%-22s %-14s %-5s %s\n' "$target" "$dir" "$result" "${line#fuzz: }" | tee -a "$summary"
	if [ "$result" = FAIL ]; then
		sed -n '/--- FAIL\|Failing input written to\|panic:\|To re-run/,+3p' "$log" | head -40
		echo "crash input kept as a seed under ./$dir/testdata/fuzz/$target/ (commit it)"
	fi
	rm -f "$log"
	[ "$result" != FAIL ]
}
export -f run_one
export GO FUZZTIME summary
export parallel_flag="${parallel[*]:-}"

printf '%s\n' "${targets[@]}" | xargs -P "$FUZZJOBS" -L 1 bash -c 'parallel=($parallel_flag); run_one "$0" "$1" || exit 255'
echo "all ${#targets[@]} fuzz targets passed; summary in $summary (ok*: the run ended on Go's fuzz-deadline race, golang/go#75804, with no failing input)"

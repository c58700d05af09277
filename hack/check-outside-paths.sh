#!/usr/bin/env bash
# Fails when tracked code or build files reference a path outside the repository: a user has the
# clone and nothing beside it. It checks Go files, Makefiles, shell scripts and CI files for
#   - relative paths ("../x", "..") that, resolved from the file's directory, leave the repository;
#   - the reference folders next to our own checkout (shared/brief, shared/k8s, shared/pve-api, ...);
#   - absolute paths into this machine's work area (/work/...).
# Usage: hack/check-outside-paths.sh [FILE...]   (default: every tracked file of those kinds)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(git ls-files -- '*.go' '*.sh' '*.mk' 'Makefile' '*/Makefile' '.ci/*' 'go.mod' '*/go.mod')
fi
# This script names the patterns it looks for, and its test plants references on purpose (the
# test marks itself with the line below); both are skipped.
skip_marker='check-outside-paths: plants references on purpose'
kept=()
for f in "${files[@]}"; do
	[ "$f" = hack/check-outside-paths.sh ] && continue
	[ -f "$f" ] && head -n 5 "$f" | grep -qF "$skip_marker" && continue
	kept+=("$f")
done
files=("${kept[@]}")

bad=0
report() { printf '%s:%s: %s\n' "$1" "$2" "$3"; bad=1; }

# One grep per pattern over every file (-H: file, -n: line, -o: each match).
while IFS=: read -r f line tok; do
	resolved=$(realpath -m --relative-to="$root" "$(dirname "$f")/$tok")
	case "$resolved" in
	..|../*) report "$f" "$line" "\"$tok\" resolves outside the repository ($resolved)" ;;
	esac
done < <(grep -HnoP '(?<![A-Za-z0-9_.\-])\.\.(/[A-Za-z0-9_.\-]+)*/?(?![A-Za-z0-9_.\-])' "${files[@]}" || true)
while IFS=: read -r f line tok; do
	report "$f" "$line" "\"$tok\" is a reference folder beside our checkout, not part of the repository"
done < <(grep -HnoE 'shared/(brief|k8s|pve-api|sarif|hooks)[A-Za-z0-9_./-]*' "${files[@]}" || true)
while IFS=: read -r f line tok; do
	report "$f" "$line" "\"${tok#?}\" is an absolute path into this machine's work area"
done < <(grep -HnoE '(^|[^A-Za-z0-9_.])/work/[A-Za-z0-9_./-]*' "${files[@]}" || true)

if [ "$bad" -ne 0 ]; then
	echo "check-outside-paths: vendor what you need under the repository (testdata/, with its licence and origin)" >&2
	exit 1
fi

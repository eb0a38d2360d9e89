#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for a bounded time, one after
# another (go test -fuzz takes one target of one package at a time).
#
#   ./scripts/fuzz.sh                   every target, 20s each
#   FUZZTIME=2m ./scripts/fuzz.sh       longer
#   ./scripts/fuzz.sh FuzzSearch        only targets whose name matches (grep -E)
#
# Targets are found automatically: every `func FuzzXxx(f *testing.F)` in a
# _test.go file. Their seed corpora (f.Add and <pkg>/testdata/fuzz/FuzzXxx/)
# also run as ordinary tests under `go test`.
#
# A failure leaves the crashing input in <pkg>/testdata/fuzz/FuzzXxx/<hash>;
# `go test -run 'FuzzXxx/<hash>' ./<pkg>` replays it. Check it in once fixed:
# it becomes a regression seed.
#
# Environment: FUZZTIME (default 20s; any -fuzztime value, e.g. 500x),
# FUZZ_PARALLEL (fuzzing workers, default GOMAXPROCS).
set -euo pipefail

cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-20s}
filter=${1:-.}
parallel=()
if [[ -n ${FUZZ_PARALLEL:-} ]]; then
	parallel=(-parallel "$FUZZ_PARALLEL")
fi

targets=()
while IFS= read -r line; do
	targets+=("$line")
done < <(grep -rEo --include='*_test.go' --exclude-dir=.cache --exclude-dir=.git --exclude-dir=testdata \
	'^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's#^\./##; s#^([^:]*)/[^/:]*:func (Fuzz[A-Za-z0-9_]*)\(.*$#\1 \2#' | sort -u | grep -E -- "$filter" || true)

if ((${#targets[@]} == 0)); then
	echo "fuzz: no fuzz targets match '$filter'" >&2
	exit 1
fi

# crashers counts the failing inputs go test has written for a target.
crashers() { find "$1/testdata/fuzz/$2" -type f 2>/dev/null | wc -l; }

# fuzz_one runs a target. Go 1.26's fuzzing coordinator can fail a target
# with a bare "context deadline exceeded" just as -fuzztime ends, having
# found nothing (golang/go#75804, fixed in Go 1.27): a failure that wrote no
# crasher is run once more, and only a second failure counts.
fuzz_one() {
	local pkg=$1 name=$2 before out
	before=$(crashers "$pkg" "$name")
	out=$(mktemp)
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg" 2>&1 | tee "$out"; then
		rm -f "$out"
		return 0
	fi
	if (($(crashers "$pkg" "$name") == before)) && grep -q 'context deadline exceeded' "$out"; then
		rm -f "$out"
		echo "fuzz: $name failed at the end of -fuzztime without a failing input (golang/go#75804); running it again"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg"
		return
	fi
	rm -f "$out"
	return 1
}

failed=()
start=$SECONDS
for t in "${targets[@]}"; do
	pkg="./${t% *}"
	name=${t#* }
	printf '\n==> fuzz %s %s (%s)\n' "$pkg" "$name" "$fuzztime"
	if ! fuzz_one "$pkg" "$name"; then
		failed+=("$pkg $name")
	fi
done

printf '\nfuzz: %d targets, %ss\n' "${#targets[@]}" $((SECONDS - start))
if ((${#failed[@]})); then
	printf 'FAILED (crashing inputs are in <pkg>/testdata/fuzz/<target>/):\n'
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "ok"

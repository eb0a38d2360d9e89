#!/usr/bin/env bash
# mcp-hub's fast build uses go-sdk as published plus one patch
# (third_party/README.md): go.fast.mod is go.mod plus a replace directive that
# points go-sdk at third_party/go-sdk (`go build -modfile=go.fast.mod`), while
# go.mod stays free of replace directives so `go install` works.
# This script makes third_party/go-sdk from the published module, and
# go.fast.mod/go.fast.sum from go.mod/go.sum:
#
#   ./scripts/go-sdk.sh          rewrite third_party/go-sdk and go.fast.mod/.sum
#                                (after changing the version below, the patch,
#                                or go.mod)
#   ./scripts/go-sdk.sh check    fail if third_party/go-sdk is anything but
#                                the published module plus the patch, or if
#                                go.fast.mod is anything but go.mod plus the
#                                replace
#
# Only the packages mcp-hub builds are copied, without their tests.
set -euo pipefail

version=v1.8.0
module=github.com/modelcontextprotocol/go-sdk
packages=(mcp jsonrpc auth oauthex internal/json internal/jsonrpc2 internal/util
	internal/xcontext internal/mcpgodebug internal/authutil)

cd "$(dirname "$0")/.."
root=$(pwd)
# This script names go.fast.mod itself where it means it; a -modfile in
# GOFLAGS (scripts/test.sh sets one) would break `go mod download` below.
unset GOFLAGS
target=$root/third_party/go-sdk
patch=$root/third_party/go-sdk.patch

# fast_mod prints go.fast.mod as it must be: go.mod plus the replace.
fast_mod() {
	cat go.mod
	printf '\n%s\n%s\n%s\n%s\n' \
		"// The fast build: go-sdk $version plus one patch (third_party/README.md)." \
		"// Build with -modfile=go.fast.mod. Made from go.mod by scripts/go-sdk.sh;" \
		"// do not edit." \
		"replace $module => ./third_party/go-sdk"
}

# Downloading outside our module keeps its replace directive out of the way.
scratch=$(mktemp -d)
trap 'chmod -R u+w "$scratch"; rm -rf "$scratch"' EXIT
src=$(cd "$scratch" && go mod download -json "$module@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ ! -d $src ]]; then
	echo "go-sdk.sh: could not download $module@$version (is the Go module proxy reachable?)" >&2
	exit 1
fi

out=$scratch/go-sdk
mkdir -p "$out"
cp "$src/go.mod" "$src/go.sum" "$src/LICENSE" "$out/"
for pkg in "${packages[@]}"; do
	mkdir -p "$out/$pkg"
	for f in "$src/$pkg"/*.go; do
		[[ $f == *_test.go ]] || cp "$f" "$out/$pkg/"
	done
done
chmod -R u+w "$out"
(cd "$out" && git apply -p1 "$patch")

case ${1:-sync} in
sync)
	rm -rf "$target"
	cp -r "$out" "$target"
	echo "third_party/go-sdk: $module@$version with third_party/go-sdk.patch"
	fast_mod >go.fast.mod
	cp go.sum go.fast.sum
	go mod tidy -modfile=go.fast.mod
	echo "go.fast.mod, go.fast.sum: go.mod, go.sum and the replace of $module"
	;;
check)
	if ! diff -r "$out" "$target"; then
		echo "third_party/go-sdk differs from $module@$version plus third_party/go-sdk.patch: run ./scripts/go-sdk.sh" >&2
		exit 1
	fi
	echo "third_party/go-sdk is $module@$version plus third_party/go-sdk.patch"
	if grep -q '^replace' go.mod; then
		echo "go.mod has a replace directive: go install refuses such a module; only go.fast.mod may have one (scripts/go-sdk.sh)" >&2
		exit 1
	fi
	if ! diff <(fast_mod) go.fast.mod; then
		echo "go.fast.mod is not go.mod plus the replace of $module: run ./scripts/go-sdk.sh" >&2
		exit 1
	fi
	if ! go mod tidy -modfile=go.fast.mod -diff; then
		echo "go.fast.sum is out of date: run ./scripts/go-sdk.sh" >&2
		exit 1
	fi
	echo "go.fast.mod is go.mod plus the replace of $module"
	;;
*)
	echo "usage: $0 [sync|check]" >&2
	exit 2
	;;
esac

#!/usr/bin/env bash
# mcp-hub builds with go-sdk as published plus one patch (third_party/README.md).
# This script makes third_party/go-sdk from the published module:
#
#   ./scripts/go-sdk.sh          rewrite third_party/go-sdk (after changing the
#                                version below or the patch)
#   ./scripts/go-sdk.sh check    fail if third_party/go-sdk is anything but
#                                the published module plus the patch
#
# Only the packages mcp-hub builds are copied, without their tests.
set -euo pipefail

version=v1.8.0
module=github.com/modelcontextprotocol/go-sdk
packages=(mcp jsonrpc auth oauthex internal/json internal/jsonrpc2 internal/util
	internal/xcontext internal/mcpgodebug internal/authutil)

cd "$(dirname "$0")/.."
root=$(pwd)
target=$root/third_party/go-sdk
patch=$root/third_party/go-sdk.patch

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
	;;
check)
	if ! diff -r "$out" "$target"; then
		echo "third_party/go-sdk differs from $module@$version plus third_party/go-sdk.patch: run ./scripts/go-sdk.sh" >&2
		exit 1
	fi
	echo "third_party/go-sdk is $module@$version plus third_party/go-sdk.patch"
	;;
*)
	echo "usage: $0 [sync|check]" >&2
	exit 2
	;;
esac

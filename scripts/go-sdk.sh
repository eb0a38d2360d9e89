#!/usr/bin/env bash
# mcp-hub builds go-sdk as published plus one patch (third_party/README.md),
# as packages of our own module: third_party/go-sdk holds the copy, with its
# import paths rewritten from github.com/modelcontextprotocol/go-sdk/... to
# github.com/mcp-hub/mcp-hub/third_party/go-sdk/..., and our code imports it
# there. go.mod needs no replace directive, so `go build`, `go install`,
# make and Docker all build the same thing.
#
#   ./scripts/go-sdk.sh          rewrite third_party/go-sdk (after changing
#                                the version below or the patch)
#   ./scripts/go-sdk.sh check    fail if third_party/go-sdk is anything but
#                                the published module plus the patch plus the
#                                path rewrite, or if anything we build or test
#                                imports the published packages instead
#
# Only the packages mcp-hub builds are copied, with their own tests and
# testdata, patched and rewritten like the code: `go test ./third_party/...`
# runs go-sdk's tests against the copy we build (and ./scripts/test.sh runs
# them with the rest).
set -euo pipefail

version=v1.8.0
module=github.com/modelcontextprotocol/go-sdk
copy=github.com/mcp-hub/mcp-hub/third_party/go-sdk
packages=(mcp jsonrpc auth oauthex internal/json internal/jsonrpc2 internal/util
	internal/xcontext internal/mcpgodebug internal/authutil)
# Packages copied only because the tests of the packages above use them:
# internal/oauthtest (fake OAuth servers, 709 lines, standard library and
# oauthex only) for auth's authorization_code_test.go.
test_packages=(internal/oauthtest)
# go-sdk's tests: v1.8.0 has 62 test files. The 54 in the packages above are
# copied, all but those named in excluded_tests ([path]="reason"). The other 8
# are in packages we do not copy, so they test nothing we build:
# auth/extauth (3), examples/server/... (3), internal/docs (1, checks the
# SDK's documentation) and the module root's copyright_test.go (headers of
# every file of the SDK's repository).
# The tests need two modules no other package of ours imports,
# github.com/google/go-cmp and golang.org/x/tools (its one-file txtar
# package only): both were in our module graph already (go-sdk requires
# them), so go.mod now names them at the versions it had selected, and
# go.sum and every other version are unchanged.
declare -A excluded_tests=(
	# none: every test file of a copied package builds and passes
)

cd "$(dirname "$0")/.."
root=$(pwd)
target=$root/third_party/go-sdk
patch=$root/third_party/go-sdk.patch
# `mcp-hub version` names the go-sdk it is built with.
version_go=cmd/mcp-hub/main.go
sdk_build="const sdkBuild = \"go-sdk $version with third_party/go-sdk.patch\""

# rewrite_imports FILE...: import paths of $module become those of $copy.
# Only import lines: comments that link to go-sdk's docs or issues keep
# naming the published module.
rewrite_imports() {
	sed -i -E "\#^(import )?[[:space:]]*([A-Za-z0-9_.]+ )?\"$module/#s#\"$module/#\"$copy/#" "$@"
	gofmt -w "$@" # the new path can sort differently among the imports
}

# Downloading outside our module keeps our go.mod out of the way.
scratch=$(mktemp -d)
trap 'chmod -R u+w "$scratch"; rm -rf "$scratch"' EXIT
src=$(cd "$scratch" && GOFLAGS= go mod download -json "$module@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ ! -d $src ]]; then
	echo "go-sdk.sh: could not download $module@$version (is the Go module proxy reachable?)" >&2
	exit 1
fi

# Packages of our module: no go.mod or go.sum of their own.
out=$scratch/go-sdk
mkdir -p "$out"
cp "$src/LICENSE" "$out/"
for pkg in "${packages[@]}" "${test_packages[@]}"; do
	mkdir -p "$out/$pkg"
	for f in "$src/$pkg"/*.go; do
		if [[ -v excluded_tests[${f#"$src/"}] ]]; then
			continue
		fi
		cp "$f" "$out/$pkg/"
	done
	if [[ -d $src/$pkg/testdata ]]; then
		cp -r "$src/$pkg/testdata" "$out/$pkg/"
	fi
done
for f in "${!excluded_tests[@]}"; do
	if [[ $f != *_test.go || ! -f $src/$f ]]; then
		echo "go-sdk.sh: excluded test $f is not a test file of $module@$version" >&2
		exit 1
	fi
done
chmod -R u+w "$out"
(cd "$out" && git apply -p1 "$patch")
rewrite_imports $(find "$out" -name '*.go')

case ${1:-sync} in
sync)
	rm -rf "$target"
	cp -r "$out" "$target"
	echo "third_party/go-sdk: $module@$version with third_party/go-sdk.patch, imported as $copy"
	sed -i "s#^const sdkBuild = .*#$sdk_build#" "$version_go"
	grep -qxF "$sdk_build" "$version_go"
	;;
check)
	if ! diff -r "$out" "$target"; then
		echo "third_party/go-sdk differs from $module@$version plus third_party/go-sdk.patch plus the import rewrite: run ./scripts/go-sdk.sh" >&2
		exit 1
	fi
	echo "third_party/go-sdk is $module@$version plus third_party/go-sdk.patch, imported as $copy"
	if ! grep -qxF "$sdk_build" "$version_go"; then
		echo "$version_go does not name go-sdk $version in sdkBuild: run ./scripts/go-sdk.sh" >&2
		exit 1
	fi
	if grep -q '^replace' go.mod; then
		echo "go.mod has a replace directive: go install refuses such a module" >&2
		exit 1
	fi
	# Two go-sdks in one binary would have different types for the same
	# names, and the published one decodes without the patch.
	if published=$(GOFLAGS= go list -deps -test ./... | grep "^$module/"); then
		echo "these packages of the published $module are built into mcp-hub or its tests; import $copy/... instead:" >&2
		echo "$published" >&2
		exit 1
	fi
	echo "mcp-hub and its tests import go-sdk only as $copy"
	;;
*)
	echo "usage: $0 [sync|check]" >&2
	exit 2
	;;
esac

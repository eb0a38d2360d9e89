#!/usr/bin/env bash
# The Dockerfile's build step and what its image runs, checked without a
# Docker engine (./scripts/test.sh runs this):
#   1. `make release` (the Dockerfile's RUN line): a static, stripped,
#      version-stamped binary;
#   2. the image's command, `mcp-hub --config hub.yaml serve --http ADDR`,
#      answering /healthz with every builtin server ready (127.0.0.1 here;
#      the image binds 0.0.0.0:8080);
#   3. that bind, 0.0.0.0, with the bundled config (no auth): refused.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$(mktemp -d)
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
bin=$dir/mcp-hub
version=v0.0.0-release-check

make --no-print-directory release OUT="$bin" VERSION="$version"
info=$(file "$bin")
if [[ $info != *"statically linked"* ]]; then
	echo "release-check: $bin is not statically linked: $info" >&2
	exit 1
fi
if [[ $info != *", stripped"* ]]; then
	echo "release-check: $bin is not stripped: $info" >&2
	exit 1
fi
# Captured first: with pipefail, `"$bin" version | grep -q` fails when grep
# exits at the first line and the second write gets SIGPIPE.
stamp=$("$bin" version)
if ! grep -q "^mcp-hub $version\$" <<<"$stamp"; then
	echo "release-check: the version is not stamped: $stamp" >&2
	exit 1
fi
echo "release build: $(stat -c %s "$bin") bytes, static, stripped, ${stamp%%$'\n'*}"

# As the image runs it, with stdin closed (no terminal in a container).
"$bin" --config hub.yaml serve --http 127.0.0.1:0 </dev/null 2>"$dir/log" &
pid=$!
url=
for _ in $(seq 100); do
	url=$(sed -n '/health=http/{s/.*health=\(http[^ ]*\).*/\1/p;q;}' "$dir/log")
	[[ -n $url ]] && break
	sleep 0.1
done
if [[ -z $url ]]; then
	echo "release-check: serve --http did not start:" >&2
	cat "$dir/log" >&2
	exit 1
fi
health=$(curl -fsS "$url")
for server in time calc notes text; do
	if ! grep -q "\"name\":\"$server\"" <<<"$health"; then
		echo "release-check: /healthz lacks $server: $health" >&2
		exit 1
	fi
done
echo "serve --http: $url answers with the bundled servers"

# The image's own bind, 0.0.0.0, with the bundled config (no auth): the hub
# must refuse to serve it open (exit 2) unless told to.
set +e
MCP_HUB_ALLOW_UNAUTHENTICATED= "$bin" --config hub.yaml serve --http 0.0.0.0:0 </dev/null >"$dir/open.log" 2>&1
status=$?
set -e
if [[ $status != 2 ]] || ! grep -q -- "--allow-unauthenticated" "$dir/open.log"; then
	echo "release-check: serve --http 0.0.0.0 without auth: exit $status, want 2:" >&2
	cat "$dir/open.log" >&2
	exit 1
fi
echo "serve --http 0.0.0.0 without auth: refused (exit 2)"

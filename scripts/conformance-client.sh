#!/usr/bin/env bash
# The "client under test" of the MCP conformance suite's client scenarios,
# with mcp-hub's upstream side as the client:
#
#   node .../conformance/dist/index.js client --command scripts/conformance-client.sh \
#       --suite auth --spec-version 2025-11-25
#
# The suite starts a scenario server and runs this script with the server's
# URL as the last argument, the scenario's name in MCP_CONFORMANCE_SCENARIO
# and extras (pre-registered client_id / client_secret) as JSON in
# MCP_CONFORMANCE_CONTEXT. The script writes a config whose only upstream
# is that URL (prefix ""), then drives the real mcp-hub:
#
#   auth/*   mcp-hub login (with a $BROWSER that follows the authorization
#            server's redirects to the hub's own callback, as a browser
#            would), then mcp-hub call test-tool
#   initialize                           mcp-hub tools --json
#   tools_call                           mcp-hub call add_numbers a=5 b=3
#   elicitation-sep1034-client-defaults  mcp-hub call test_client_elicitation_defaults --elicitation accept
#   sse-retry                            mcp-hub call test_reconnection
#   anything else                        mcp-hub tools --json
#
# With MCP_HUB_CONFORMANCE_SERVE_CLIENT=CMD, the steps after login run
# through `mcp-hub serve --http` instead, with CMD URL (a real MCP client,
# say go-sdk's conformance everything-client, which reads the same
# MCP_CONFORMANCE_* variables) as the client of the hub.
#
# Environment: MCP_HUB_BIN, the mcp-hub to run (default: built once into
# .cache/bin/mcp-hub). Needs curl or wget. Tokens go to a temporary
# MCP_HUB_STATE_DIR, removed at the end.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
url=${!#}
scenario=${MCP_CONFORMANCE_SCENARIO:-}
context=${MCP_CONFORMANCE_CONTEXT:-}

hub=${MCP_HUB_BIN:-}
if [[ -z $hub ]]; then
	hub=$root/.cache/bin/mcp-hub
	if [[ ! -x $hub ]]; then
		mkdir -p "$root/.cache/bin"
		(cd "$root" && go build -o "$hub" ./cmd/mcp-hub)
	fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MCP_HUB_STATE_DIR=$work/state

# A string field of the context's JSON object (the suite's values are plain).
field() { sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p' <<<"$context"; }
client_id=$(field client_id)
client_secret=$(field client_secret)

{
	echo "servers:"
	echo "  conformance:"
	echo "    url: \"$url\""
	echo "    prefix: \"\""
	echo "    timeout: 30s"
	echo "    oauth:"
	# The suite's CIMD scenario expects this client id; the other
	# scenarios' authorization servers do not support CIMD.
	echo "      client_metadata_url: https://conformance-test.local/client-metadata.json"
	if [[ -n $client_id ]]; then echo "      client_id: \"$client_id\""; fi
	if [[ -n $client_secret ]]; then echo "      client_secret: \"$client_secret\""; fi
} >"$work/hub.yaml"

cat >"$work/browser" <<'EOF'
#!/bin/sh
# Follows the authorization server's redirects to mcp-hub's callback, as a
# browser would after the user consented.
if command -v curl >/dev/null; then
	exec curl -sS -L --max-redirs 10 -o /dev/null "$1"
fi
exec wget -q --max-redirect=10 -O /dev/null "$1"
EOF
chmod +x "$work/browser"
export BROWSER=$work/browser

mcphub() { "$hub" --config "$work/hub.yaml" "$@"; }

if [[ -n ${MCP_HUB_CONFORMANCE_SERVE_CLIENT:-} ]]; then
	if [[ $scenario == auth/* ]]; then
		mcphub login conformance --timeout 60s
	fi
	# Not through mcphub: $! must be the hub itself, not a subshell.
	"$hub" --config "$work/hub.yaml" serve --http 127.0.0.1:0 >/dev/null 2>"$work/serve.log" &
	serve=$!
	trap 'kill $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$work"' EXIT
	hub_url=
	for _ in $(seq 600); do # the hub logs its URL once its upstream was tried
		hub_url=$(sed -n 's/.*msg="serving streamable HTTP" url=\([^ ]*\).*/\1/p' "$work/serve.log")
		[[ -n $hub_url ]] && break
		kill -0 $serve 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
		sleep 0.1
	done
	[[ -n $hub_url ]] || { echo "conformance-client.sh: serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
	status=0
	$MCP_HUB_CONFORMANCE_SERVE_CLIENT "$hub_url" || status=$?
	if [[ $status != 0 ]]; then tail -40 "$work/serve.log" >&2; fi
	exit $status
fi

case $scenario in
auth/*)
	mcphub login conformance --timeout 60s
	mcphub call test-tool
	;;
tools_call) mcphub call add_numbers a=5 b=3 ;;
elicitation-sep1034-client-defaults) mcphub call test_client_elicitation_defaults --elicitation accept ;;
sse-retry) mcphub call test_reconnection ;;
*) mcphub tools --json ;;
esac

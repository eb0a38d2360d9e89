// Package hub aggregates many upstream MCP servers into one MCP server.
//
// The model has four parts:
//
//   - Config: hub.yaml (or a Claude Desktop JSON file) loaded and checked.
//   - Catalog: an immutable snapshot of every upstream tool and prompt under
//     its exposed name (`<server>__<tool>` by default, at most 64 characters),
//     partitioned into eager and deferred tools, with a BM25 index over the
//     deferred ones. It is rebuilt whenever an upstream's lists change.
//   - Session: one per downstream client session, with a go-sdk *mcp.Server
//     of its own. It lists the eager tools, the deferred tools it has loaded
//     through search_tools, and the meta-tools; loading changes only its own
//     list and sends list_changed only to it.
//   - Forwarding: tool calls, resources, prompts, completions, logging,
//     progress and cancellation go to the upstream that owns them;
//     server-to-client requests (sampling, elicitation, roots) come back to
//     the session whose call caused them.
//
// Hub ties them together: New starts the upstreams, and ServeStdio,
// HTTPHandler (NewHTTPServer, with the server's timeouts) and Connect
// attach sessions over stdio, streamable HTTP and in-memory transports.
//
// Each boundary where a client's input enters the hub recovers from a
// panic (package internal/safe): a session's requests (Session.guard,
// which also redacts every error a client sees), the stdio guard, catalog
// rebuilds (the previous catalog stays) and session syncs. Over HTTP, a
// session is built only for an initialize request, at most max_sessions
// at once (httpserver.go).
package hub

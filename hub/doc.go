// Package hub aggregates many upstream MCP servers into one MCP server:
// the core, with no network serving of its own beyond stdio and in-memory
// sessions. Package gateway serves it to a team over streamable HTTP.
//
// The model has four parts:
//
//   - Config: hub.yaml (or a Claude Desktop JSON file) loaded and checked.
//   - Catalog: an immutable snapshot of every upstream tool and prompt under
//     its exposed name (`<server>__<tool>` by default, at most 64 characters),
//     partitioned into eager and deferred tools, with a BM25 index over the
//     deferred ones (and, with discovery.embeddings, their vectors, which
//     arrive from the cache or a background run: semantic.go). It is
//     rebuilt whenever an upstream's lists change. Each server's tools are
//     checked against their pins as it is built (pins.go, package pin): a
//     tool whose definition changed, or carries hidden characters, enters
//     the catalog's Quarantine instead of its tools, so no route lists,
//     finds or calls it, and a lookup of its name says it is quarantined
//     and how to approve it. A change of the pins made elsewhere (`mcp-hub
//     pins approve`) rebuilds it within a second.
//   - Session: one per downstream client session, with a go-sdk *mcp.Server
//     of its own (for its notifications). It lists the eager tools, the
//     deferred tools it has loaded through search_tools, and the meta-tools;
//     loading changes only its own list and sends list_changed only to it.
//     What every session of a toolset lists (definitions, the manifest,
//     instructions) is built once per catalog and shared; a session holds
//     only its loaded names, and no goroutine of its own (toollist.go;
//     session.go's watch runs when the SDK session ends).
//   - Forwarding: tool calls, resources, prompts, completions, logging,
//     progress and cancellation go to the upstream that owns them; what an
//     upstream sends during a call (sampling, elicitation and roots
//     requests, logs, progress) comes back to the client whose call caused
//     it, and only to it: by an exact link where there is one, else only
//     while every call in flight to that upstream is one client's (a
//     legacy session, or one modern request); what cannot be attributed
//     is refused or dropped, never broadcast (attribution.go's router). A stdio
//     server with `isolation` runs a process per principal or client
//     session, and what one sends is its owner's alone (isolation.go).
//
// A client's request takes one path through the core, one file per
// layer: the session's receiving chain, declared once as an ordered list
// (Session.receiving, session.go); route.go, which decides the request's
// protocol era once and answers what the hub answers itself; for a
// tools/call, toolcall.go, which decides which tool the call names;
// metatools.go, which answers the hub's own tools (search_tools,
// call_tool); forward.go, which forwards a call to its upstream; and
// attribution.go, which takes what the upstream sends meanwhile back to
// the call's client. docs/design.md follows a tools/call along it.
//
// Both protocol eras are served (modern.go): 2025-11-25 and older, in
// which a session loads what search_tools finds; and, with protocol.modern,
// the stateless 2026-07-28, in which a client's tools/list never changes
// with its own calls, found tools are called through call_tool, and an
// upstream's sampling, elicitation and roots requests reach the client as
// input_required results (inputrequired.go).
//
// Hub ties them together: New starts the upstreams, and ServeStdio and
// Connect (in memory) attach sessions; NewSession makes one for a
// transport of the caller's (the gateway's streamable HTTP), and
// Session.Watch ties it to the SDK session that serves it. Apply
// (reload.go) makes a running hub serve an edited config: the config and
// its upstreams are one value swapped atomically, servers are diffed by
// their entries, and sessions survive with their loaded tools.
//
// The core knows nothing of what is built on it. It offers seams instead
// (hooks.go):
//
//   - Hooks, in Options: Observe makes the layer that observes a
//     session's requests, at its declared place in the session's receiving
//     chain (Session.receiving, session.go); the others are called when a
//     session starts, ends or loads tools, and when a new catalog is in
//     service.
//   - CallTrace, in a request's context (WithCallTrace), in the manner of
//     net/http/httptrace: called when the client calls a meta-tool, when a
//     search ran, when the hub refuses a call itself, and around every
//     request it sends upstream for the client (UpstreamStart may return
//     a context of its own and add to the request's _meta), and when a
//     2026-07-28 call is answered input_required or continued by the
//     client's retry. A session's own Stats are one more subscriber.
//   - SessionOptions: a session made with a given id, principal and
//     loaded tools carries on one made before (a session store's
//     restore); Persist makes the outermost layer of its chain (the
//     store's, which keeps it).
//
// Each boundary where a client's input enters the hub recovers from a
// panic (package internal/safe): a session's requests (Session.guard,
// which also redacts every error a client sees), the stdio guard, catalog
// rebuilds (the previous catalog stays) and session syncs.
package hub

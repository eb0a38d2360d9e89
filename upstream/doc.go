// Package upstream keeps the hub's connections to the MCP servers it
// aggregates.
//
// One Upstream exists per configured server. It connects in the background
// (stdio child process, streamable HTTP, SSE, or an in-process builtin
// server), lists every page of tools, resources, resource templates and
// prompts, and keeps that snapshot current: the upstream's own list_changed
// notifications trigger a re-list, and a connection that ends (a crashed
// child, a dropped HTTP session) is re-established with capped exponential
// backoff and jitter. After repeated failures the upstream is marked
// unhealthy and calls fail fast until a cool-down passes.
//
// The package knows nothing about discovery or namespacing. What the
// upstream sends on its own (log messages, progress, resource updates,
// sampling, elicitation and roots requests) is handed to a Listener, which
// the hub implements and which decides where it goes. Downstream sessions
// appear only as opaque owners: an HTTP upstream runs each owner's calls in
// a session of its own (owned.go), a stdio server with `isolation` in a
// process of the owner's principal or session (isolated.go), and says
// whose session or process a message came in (Owner).
//
// A streamable HTTP server that asks for OAuth (a 401 with a Bearer
// challenge) gets its token from a store shared by every mcp-hub process
// (oauth.go, on go-sdk's auth.AuthorizationCodeHandler): refreshed before
// it expires and after a 401. Only `mcp-hub login` (Login), or an
// interactive process asked for more scope, opens a browser (callback.go);
// anywhere else a server without a usable token is StateNeedsLogin, and a
// login stored meanwhile is picked up without a restart.
//
// Servers of either MCP revision are reached (stateless.go): streamable
// HTTP servers are asked for the stateless revision (2026-07-28) first,
// stdio servers for 2025-11-25 first, unless the config says otherwise.
// With a stateless server, log levels travel in each call, list changes
// arrive on subscriptions/listen streams (a stream that ends makes the
// hub connect and listen again), and the input a call asks for
// (input_required) is answered through the Listener for the session that
// made the call, which is then sent again with the answers.
//
// Tool calls to a stdio server bypass the SDK's client: the request goes
// out and the result comes back as bytes (RawResult), so the hub forwards
// what the server wrote without decoding and re-encoding it.
//
// A server cannot take the hub down or run away with it: one message is
// bounded by MaxResultBytes and past it only its call fails (limits.go);
// writes to a stdio server that stopped reading time out and restart it
// (stdio.go); list_changed storms are coalesced and lists are capped
// (lists.go); a panic in the Listener fails only that message. An HTTP
// server gets its requests and credentials only at its configured origin
// (origin.go), and every secret of its config is redacted from what the
// package reports (secrets.go finds them, internal/redact removes them).
package upstream

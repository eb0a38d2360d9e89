// Package dashboard serves the hub's web page at /ui: what an operator of
// a shared hub wants to see at a glance, server-rendered with html/template,
// without JavaScript or external assets.
//
// The page has four parts:
//
//   - Servers: each upstream's state, tool counts (eager and deferred),
//     restarts, connect time, last call latency and last error, as
//     `mcp-hub servers` and /healthz report them.
//   - Search: a form (GET /ui?q=...&server=...) whose result is exactly what
//     search_tools returns for the query, produced by the hub's own
//     Hub.Search, the same call `mcp-hub search` prints.
//   - Sessions: the open client sessions, their principal, toolset, client
//     and the deferred tools they have loaded.
//   - Tools: every tool of every server, eager or deferred.
//
// Access. The handler is mounted behind the gateway's guard (Host and Origin
// checks, auth, rate limits), which also accepts the token from the
// gateway.UICookie cookie under /ui. A browser without a valid token is sent to
// /ui/login, a form that takes a token (a static token or an OAuth access
// token), checks it with Gateway.VerifyToken and sets the cookie: HttpOnly,
// SameSite=Strict, Path=/ui, Secure when served over TLS. Login and logout
// are POSTs that a browser must send from the hub's own origin (Origin and
// Sec-Fetch-Site are checked), so another site cannot log a visitor in or
// out. A principal restricted to some toolsets sees only those toolsets'
// tools and only its own sessions.
package dashboard

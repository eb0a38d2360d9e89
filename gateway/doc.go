// Package gateway serves a hub (package hub) to a team: over streamable
// HTTP, behind Host/Origin checks and authentication, with rate limits,
// Prometheus metrics, OpenTelemetry tracing, an audit log, /healthz, the
// dashboard (package dashboard) and, with several replicas, a session
// store.
//
// New sets up these pieces for a config, then starts the hub with the
// gateway's hooks on it (hub.Hooks): every session gets the observe
// layer (observe.go, hub.Hooks.Observe) at its declared place in the
// session's chain (hub's Session.receiving), outside the hub's own; an
// HTTP session that a session store keeps gets the store's persist layer
// outside that (restore.go, hub.SessionOptions.Persist). observe times
// each request, runs its span, and when it ends counts it in the metrics and
// writes its audit line; what the hub did meanwhile (which upstream tool
// answered and how, how many tools a search loaded) reaches the gateway
// through a hub.CallTrace in the request's context. The gateway hears of
// sessions starting and ending (audit), of tools loaded (metrics, the
// session store) and of new catalogs (metric series of tools that are
// gone are deleted). Apply swaps the auth configuration along with the
// hub's (hub.Hub.Apply).
//
// HTTPHandler (NewHTTPServer, with the config's http: limits) is the
// HTTP side, and every request passes the same steps:
//
//   - guardOrigin: on a loopback listener the Host must be loopback, and a
//     browser Origin loopback or allowed (DNS rebinding); every path;
//   - admit (authenticate.go): the principal of a static token
//     (principal.go) or a JWT access token of the configured issuer
//     (oauthrs.go: the issuer's keys fetched once at a time, cached and
//     refreshed; RFC 9728 metadata), the authorization decision (scopes,
//     toolsets), the failed-authentication limit and the rate limit per
//     principal (ratelimit.go), with each message of a batch counted
//     (batch.go);
//   - jsonRPCErrors (httperrors.go) and answerInOneWrite (flush.go): the
//     SDK's plain-text refusals become JSON-RPC errors, and an answer
//     complete at its first flush leaves in one write;
//   - the session: a request with Mcp-Session-Id goes to its session, the
//     SDK's; a POST without one gets a new hub.Session only when it is an
//     initialize request, and only while fewer than max_sessions are open
//     (httpserver.go).
//
// Identity: a principal's id is namespaced by kind (hub.Principal), and
// hashes of guessable values (a token without a name, a call's arguments
// in the audit log) are keyed with the deployment's hash key (hashkey.go).
// An HTTP session belongs to the principal that opened it.
//
// With session_store set, HTTP sessions outlive their replica: each one's
// initialize params, toolset, principal and loaded tools are kept in a
// SessionStore (store.go; Options.OpenStore makes one, cmd/mcp-hub wires
// package redisstore, so only the program links a Redis client), and a
// replica that gets a request for a session it does not hold rebuilds it
// under the same id (hub.SessionOptions) before serving it (restore.go).
// When the store is away sessions stay in memory and are written back
// later.
//
// Tracing uses the OpenTelemetry API only: the tracer provider is the
// caller's (Options.TracerProvider; cmd/mcp-hub builds the SDK one with
// its exporter), and without one the hot path touches nothing of it.
package gateway

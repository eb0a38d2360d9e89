// Package version holds mcp-hub's version: what `mcp-hub version` prints,
// and what the hub sends as serverInfo to its clients, as clientInfo to
// its upstreams, and as the tracing service version.
//
// It imports nothing, so every layer can use it, and the release build
// stamps it in one place (Makefile:
// -X github.com/mcp-hub/mcp-hub/internal/version.Version=...).
package version

// Version is the hub's version; the release build overrides it.
var Version = "0.1.0"

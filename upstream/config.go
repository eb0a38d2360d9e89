package upstream

import "github.com/mcp-hub/mcp-hub/config"

// A server's entry under `servers:` is package config's (config.Upstream):
// upstream reads it under the names it has always had.
type (
	Config      = config.Upstream
	OAuthConfig = config.UpstreamOAuth
	Duration    = config.Duration
)

// Transport names accepted in configuration, and the call timeout of a
// server that sets none.
const (
	TransportStdio      = config.TransportStdio
	TransportStreamable = config.TransportStreamable
	TransportSSE        = config.TransportSSE
	TransportBuiltin    = config.TransportBuiltin
	DefaultTimeout      = config.DefaultTimeout
)

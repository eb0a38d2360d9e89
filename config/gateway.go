package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// validateGateway checks the team-deployment sections: auth, audit and
// telemetry.
func (c *Config) validateGateway(line func(keys ...string) int) []error {
	var errs []error
	bad := func(msg string, keys ...string) {
		errs = append(errs, &Error{Path: c.Path, Line: line(keys...), Msg: msg})
	}
	names := map[string]bool{}
	for i, t := range c.Auth.Tokens {
		if strings.TrimSpace(t.Value) == "" {
			// Fail closed: an empty token must not read as "fewer tokens",
			// or as no auth at all.
			bad(fmt.Sprintf("auth.tokens[%d]: the token is empty (give every entry a token, or remove it)", i), "auth", "tokens")
		}
		if t.Name == "" {
			continue
		}
		if names[t.Name] {
			bad(fmt.Sprintf("auth.tokens: the name '%s' is given twice; token names must be unique", t.Name), "auth", "tokens")
		}
		names[t.Name] = true
	}
	if o := c.Auth.OAuth; o != nil {
		if err := o.Validate(); err != nil {
			bad(err.Error(), "auth", "oauth")
		}
	}
	if rl := c.Auth.RateLimit; rl != nil {
		if rl.RequestsPerSecond < 0 || rl.Burst < 0 {
			bad("auth.rate_limit: requests_per_second and burst must not be negative", "auth", "rate_limit")
		}
		for name, r := range rl.Principals {
			if r.RequestsPerSecond < 0 || r.Burst < 0 {
				bad(fmt.Sprintf("auth.rate_limit.principals.%s: requests_per_second and burst must not be negative", name), "auth", "rate_limit", "principals", name)
			}
		}
	}
	if c.Audit.MaxSizeMB < 0 || c.Audit.MaxBackups < 0 {
		bad("audit: max_size_mb and max_backups must not be negative", "audit")
	}
	if (c.Audit.MaxSizeMB != 0 || c.Audit.MaxBackups != 0 || c.Audit.IncludeArguments) && c.Audit.File == "" {
		bad("audit: set 'file' (the audit log's path); the other audit keys do nothing without it", "audit")
	}
	if e := c.Telemetry.OTLPEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(fmt.Sprintf("telemetry.otlp_endpoint: %q is not an http(s) URL (the OTLP/HTTP receiver, e.g. http://127.0.0.1:4318)", e), "telemetry", "otlp_endpoint")
		}
	}
	return errs
}

// Configured reports whether the section asks for credentials: static
// tokens or OAuth.
func (a Auth) Configured() bool { return len(a.Tokens) > 0 || a.OAuth != nil }

// explicitNoAuth finds `auth: none` in the raw document (before ${VAR}
// expansion, so a variable can never switch auth off) and leaves an empty
// auth section in its place for decoding.
func explicitNoAuth(root *yaml.Node) bool {
	n := child(docMapping(root), "auth")
	if n == nil || n.Kind != yaml.ScalarNode || n.Value != "none" {
		return false
	}
	*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	return true
}

// Weakening lists how next would authenticate less than a, the auth in
// force: why a reload must not apply it unless the operator says so. It
// is weaker when
//
//   - auth is removed: a had tokens or OAuth, next has neither;
//   - it has fewer static tokens than a (a token dropped by mistake looks
//     the same as one revoked on purpose);
//   - auth.oauth is removed (no issuer where there was one);
//   - the OAuth trust moves: another issuer, audience or jwks_url, or a
//     changed toolset_claim;
//   - a scope of a's auth.oauth.required_scopes is no longer required.
//
// Adding tokens, adding OAuth, rotating a token (as many as before) and
// rate limits or allowed origins are not weakening. The reasons name keys,
// never values.
func (a Auth) Weakening(next Auth) []string {
	if !a.Configured() {
		return nil
	}
	if !next.Configured() {
		return []string{"auth is removed: requests would need no token"}
	}
	var why []string
	if len(next.Tokens) < len(a.Tokens) {
		why = append(why, fmt.Sprintf("auth.tokens: %d tokens where there were %d", len(next.Tokens), len(a.Tokens)))
	}
	switch o, n := a.OAuth, next.OAuth; {
	case o == nil:
	case n == nil:
		why = append(why, "auth.oauth is removed (no issuer)")
	default:
		for _, k := range []struct {
			key     string
			was, is string
		}{{"issuer", o.Issuer, n.Issuer}, {"audience", o.Audience, n.Audience}, {"jwks_url", o.JWKSURL, n.JWKSURL}, {"toolset_claim", o.ToolsetClaim, n.ToolsetClaim}} {
			if k.was != k.is {
				why = append(why, "auth.oauth."+k.key+" changes")
			}
		}
		for _, s := range o.RequiredScopes {
			if !slices.Contains(n.RequiredScopes, s) {
				why = append(why, "auth.oauth.required_scopes: a scope is no longer required")
				break
			}
		}
	}
	return why
}

// HTTPLimits is the config's `http:` section: the limits of the hub's
// HTTP server. Zero values take the defaults. None of them cuts a
// long-lived stream (the GET event stream of a session) or a long tool
// call short: those are bounded by session_idle_timeout and the servers'
// call timeouts.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers (10s).
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// BodyReadTimeout bounds reading a request's body (30s). It applies
	// to the body only: once it is read the connection has no deadline.
	BodyReadTimeout Duration `yaml:"body_read_timeout"`
	// IdleTimeout closes a keep-alive connection that has waited this
	// long for its next request (90s).
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes bounds a request's headers (64 KiB); past it the
	// client gets 431.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
}

// Defaults of HTTPLimits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyReadTimeout   = 30 * time.Second
	DefaultIdleTimeout       = 90 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// Token is one static bearer token of auth.tokens: a plain string, or
// {name, token} so that the audit log and the dashboard can say whose it is.
type Token struct {
	Name  string `yaml:"name"`
	Value string `yaml:"token"`
}

// UnmarshalYAML accepts both shapes.
func (t *Token) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		t.Value = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "name" && k != "token" {
				return fmt.Errorf("line %d: auth.tokens: unknown key '%s' (an entry is a token string, or {name: NAME, token: TOKEN})", n.Content[i].Line, k)
			}
		}
		type plain Token
		return n.Decode((*plain)(t))
	}
	return fmt.Errorf("line %d: auth.tokens: an entry is a token string, or {name: NAME, token: TOKEN}", n.Line)
}

// TokenValues are the tokens of auth.tokens, without their names.
func (a Auth) TokenValues() []string {
	out := make([]string, 0, len(a.Tokens))
	for _, t := range a.Tokens {
		out = append(out, t.Value)
	}
	return out
}

// Telemetry is the config's telemetry section. The hub itself only uses
// the OpenTelemetry API: the program builds the tracer provider from this
// section (cmd/mcp-hub: the SDK with an OTLP/HTTP exporter) and hands it to
// New in Options.TracerProvider. Tracing is on when OTLPEndpoint is set, or
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is;
// the other OTEL_* variables of the OTLP/HTTP exporter and the SDK
// (headers, timeout, sampler, resource attributes) apply as usual.
type Telemetry struct {
	// OTLPEndpoint is the OTLP/HTTP receiver's base URL
	// (http://127.0.0.1:4318); traces go to its /v1/traces.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// ServiceName is service.name on every span (default mcp-hub;
	// OTEL_SERVICE_NAME overrides it).
	ServiceName string `yaml:"service_name"`
}

// OAuth makes the hub an OAuth 2.1 resource server (auth.oauth): clients
// log in at the issuer and present its JWT access tokens (RFC 9068).
type OAuth struct {
	// Issuer is the authorization server's issuer URL; tokens' `iss` must
	// equal it, and its keys are found from its metadata (RFC 8414, or
	// OpenID Connect discovery) unless JWKSURL is set.
	Issuer string `yaml:"issuer"`
	// Audience is this hub's resource URL as the issuer writes it in `aud`
	// (for a toolset path, `<audience>/<toolset>` is accepted too).
	Audience string `yaml:"audience"`
	// RequiredScopes must all be in the token's `scope` (or `scp`).
	RequiredScopes []string `yaml:"required_scopes"`
	// JWKSURL overrides discovery of the issuer's key set.
	JWKSURL string `yaml:"jwks_url"`
	// ToolsetClaim names a claim (a string, or a list of strings; "a.b"
	// reaches into objects) whose values are the toolsets the token holder
	// may use. A token naming no configured toolset is refused (403).
	ToolsetClaim string `yaml:"toolset_claim"`
}

// Validate checks what can be checked without the network.
func (o *OAuth) Validate() error {
	var errs []string
	if o.Issuer == "" {
		errs = append(errs, "auth.oauth.issuer is required: the authorization server's issuer URL (https://..., or http:// on loopback)")
	} else if err := HTTPSOrLoopback(o.Issuer); err != nil {
		errs = append(errs, fmt.Sprintf("auth.oauth.issuer: %v", err))
	}
	if o.Audience == "" {
		errs = append(errs, "auth.oauth.audience is required: this hub's resource URL as the issuer writes it in the tokens' aud (e.g. https://hub.example.com/mcp)")
	}
	if o.JWKSURL != "" {
		if err := HTTPSOrLoopback(o.JWKSURL); err != nil {
			errs = append(errs, fmt.Sprintf("auth.oauth.jwks_url: %v", err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// HTTPSOrLoopback accepts an absolute https URL, or http to a loopback host.
func HTTPSOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) {
		return fmt.Errorf("%q must use https (plain http only to a loopback address)", raw)
	}
	return nil
}

// RateLimit is auth.rate_limit: a token bucket per principal (per client
// address for anonymous requests), over every HTTP request the hub guards;
// each message of a JSON-RPC batch counts as one request.
type RateLimit struct {
	Rate `yaml:",inline"`
	// Principals overrides the rate for principals by id (Principal.ID:
	// token:NAME, oauth:ISSUER#SUB, client:ISSUER#CLIENT_ID). A bare name
	// is a static token's name (token:NAME), as it always was; it never
	// matches an OAuth subject of the same name.
	// requests_per_second: 0 there means no limit.
	Principals map[string]Rate `yaml:"principals"`
}

// Rate is a sustained rate and a burst.
type Rate struct {
	RequestsPerSecond float64 `yaml:"requests_per_second"`
	// Burst is how many requests may come at once (default: the rate, at least 1).
	Burst int `yaml:"burst"`
}

// BurstSize is Burst with its default: the rate, at least 1.
func (r Rate) BurstSize() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return max(1, int(math.Ceil(r.RequestsPerSecond)))
}

// Audit configures the audit log: one JSON line per tool call, search, and
// session start and end.
type Audit struct {
	// File is the log's path; empty: no audit log.
	File string `yaml:"file"`
	// MaxSizeMB rotates the file when it would grow past this (default 100).
	MaxSizeMB int `yaml:"max_size_mb"`
	// MaxBackups is how many rotated files (FILE.1, FILE.2, ...) are kept (default 5).
	MaxBackups int `yaml:"max_backups"`
	// IncludeArguments writes argument values (with the config's secrets
	// redacted). Off: only their keyed hash (args_hmac) is written.
	IncludeArguments bool `yaml:"include_arguments"`
}

// ToolsetClaim is the claim auth.oauth.toolset_claim names, for messages:
// "toolset" when it names none.
func (a Auth) ToolsetClaim() string {
	if a.OAuth == nil || a.OAuth.ToolsetClaim == "" {
		return "toolset"
	}
	return a.OAuth.ToolsetClaim
}

// IsLoopbackHost reports whether host is localhost or a loopback address.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SessionStoreNeedsHashKey is the config error of a session_store without
// hash_key.
const SessionStoreNeedsHashKey = "session_store needs hash_key: the replicas sharing the store must share the key that hashes principal ids and audit arguments, and the store never holds it; set hash_key to the same random value on every replica (generate one with: openssl rand -hex 32; e.g. hash_key: ${MCP_HUB_HASH_KEY})"

// minHashKeyLen is the shortest hash_key accepted: a short key is as
// guessable as the values it protects.
const minHashKeyLen = 32

// validateIdentity checks the keys that decide who a principal is and how
// it is hashed: hash_key, and the names of auth.rate_limit.principals.
func (c *Config) validateIdentity(line func(keys ...string) int) []error {
	var errs []error
	bad := func(l int, msg string) { errs = append(errs, &Error{Path: c.Path, Line: l, Msg: msg}) }
	switch at := line("hash_key"); {
	case at > 0 && c.HashKey == "":
		msg := "hash_key is empty (an unset ${VAR}?): set it to a random value of at least 32 characters (openssl rand -hex 32)"
		if c.SessionStore == "" {
			msg += ", or remove the key to have one generated"
		}
		bad(at, msg)
	case c.SessionStore != "" && c.HashKey == "":
		// Replicas sharing a store must hash principal ids and audit
		// arguments under one key, and that key must not live in the
		// store next to the ids it protects: the operator gives it.
		bad(line("session_store"), SessionStoreNeedsHashKey)
	case c.HashKey != "" && len(c.HashKey) < minHashKeyLen:
		bad(at, fmt.Sprintf("hash_key is too short: use a random value of at least %d characters (openssl rand -hex 32)", minHashKeyLen))
	}
	if rl := c.Auth.RateLimit; rl != nil {
		tokens := map[string]bool{}
		for _, t := range c.Auth.Tokens {
			tokens[t.Name] = t.Name != ""
		}
		for _, name := range sortedKeys(rl.Principals) {
			// A bare name is a static token's (token:NAME); it must name
			// one, or an override meant for an OAuth subject of that name
			// would silently apply to nobody.
			if !IsPrincipalID(name) && !tokens[name] {
				bad(line("auth", "rate_limit", "principals", name), fmt.Sprintf("auth.rate_limit.principals: '%s' names no token of auth.tokens: write the name of a static token (or token:NAME), oauth:ISSUER#SUB for an OAuth user, client:ISSUER#CLIENT_ID for an OAuth client", name))
			}
		}
	}
	return errs
}

// checkSessionStore checks the form of a session_store URL:
// redis://[:PASSWORD@]HOST:PORT/DB or rediss:// (TLS). The store itself
// (gateway/redisstore) parses the rest when the hub starts.
func checkSessionStore(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("session_store: not a URL; want redis://HOST:PORT/DB or rediss://HOST:PORT/DB")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return fmt.Errorf("session_store: scheme %q is not supported; want redis:// or rediss://", u.Scheme)
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if _, err := strconv.Atoi(db); err != nil {
			return fmt.Errorf("session_store: invalid Redis URL (want redis://[:PASSWORD@]HOST:PORT/DB): invalid database number %q", db)
		}
	}
	return nil
}

// Principal id prefixes: a principal's id is namespaced by its kind
// (hub.Principal.ID).
const (
	TokenIDPrefix  = "token:"
	OAuthIDPrefix  = "oauth:"
	ClientIDPrefix = "client:"
)

// IsPrincipalID reports whether id has the form of a principal id.
func IsPrincipalID(id string) bool {
	for _, prefix := range []string{TokenIDPrefix, OAuthIDPrefix, ClientIDPrefix} {
		if len(id) > len(prefix) && strings.HasPrefix(id, prefix) {
			return true
		}
	}
	return false
}

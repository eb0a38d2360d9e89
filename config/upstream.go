package config

import (
	"errors"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"fmt"
	"net/url"
	"time"
)

// Transport names accepted in configuration.
const (
	TransportStdio      = "stdio"
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
	TransportBuiltin    = "builtin"
)

// DefaultTimeout bounds one call to an upstream when the server sets none.
const DefaultTimeout = 60 * time.Second

// Isolation modes of a stdio server (Upstream.Isolation).
const (
	IsolationShared    = "shared"    // one process for every client (the default)
	IsolationPrincipal = "principal" // one process per principal
	IsolationSession   = "session"   // one process per client session
)

// Isolation's defaults. An isolated process costs what the server costs
// (often a runtime of tens of MB): the bound keeps a busy gateway from
// running out of memory or descriptors, the idle timeout gives them back.
const (
	DefaultMaxIsolatedProcesses = 16
	DefaultIsolationIdleTimeout = 10 * time.Minute
)

// Upstream says how to reach one server: the connection part of its
// entry under `servers:` (package upstream calls it upstream.Config).
// Exactly one of Command, URL or Builtin is set; Validate reports anything
// else.
type Upstream struct {
	Name string `yaml:"-" json:"-"`

	// stdio
	Command string            `yaml:"command,omitempty" json:"command,omitempty"`
	Args    []string          `yaml:"args,omitempty" json:"args,omitempty"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	Cwd     string            `yaml:"cwd,omitempty" json:"cwd,omitempty"`
	// InheritEnv passes the hub's whole environment to the child. Off by
	// default so that secrets meant for one server do not leak to all.
	InheritEnv bool `yaml:"inherit_env,omitempty" json:"inherit_env,omitempty"`
	// Isolation says how many processes of the server run: one shared
	// by every client (IsolationShared, the default), or one more per
	// principal or per client session, so that what a process sends
	// (sampling, elicitation, roots, logs) belongs to one owner
	// (upstream/isolated.go).
	Isolation string `yaml:"isolation,omitempty" json:"isolation,omitempty"`
	// IsolationIdleTimeout stops an isolated process that has served no
	// request for this long; zero means DefaultIsolationIdleTimeout.
	IsolationIdleTimeout Duration `yaml:"isolation_idle_timeout,omitempty" json:"isolation_idle_timeout,omitempty"`
	// MaxIsolatedProcesses bounds the isolated processes of the server
	// running at once; zero means DefaultMaxIsolatedProcesses.
	MaxIsolatedProcesses int `yaml:"max_isolated_processes,omitempty" json:"max_isolated_processes,omitempty"`
	// Sandbox confines the server (package sandbox); nil: sandbox_default
	// applies, which validation copies here.
	Sandbox *Sandbox `yaml:"sandbox,omitempty" json:"sandbox,omitempty"`

	// remote
	URL       string            `yaml:"url,omitempty" json:"url,omitempty"`
	Transport string            `yaml:"transport,omitempty" json:"transport,omitempty"`
	Headers   map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	// OAuth tunes how the hub authorizes at the server (upstream/oauth.go). A
	// streamable HTTP server that answers 401 with a Bearer challenge is
	// treated as OAuth-protected without it.
	OAuth *UpstreamOAuth `yaml:"oauth,omitempty" json:"oauth,omitempty"`

	// in-process
	Builtin string `yaml:"builtin,omitempty" json:"builtin,omitempty"`

	// ProtocolVersion is the MCP revision the hub asks this server for.
	// Empty (the default) lets the hub choose per transport
	// (upstream/stateless.go); "2026-07-28" asks for the stateless revision
	// first (server/discover, then initialize) on any transport; an older
	// revision uses only the initialize handshake at it.
	ProtocolVersion string `yaml:"protocol_version,omitempty" json:"protocol_version,omitempty"`

	// Timeout bounds each call (and the initial connect); zero means DefaultTimeout.
	Timeout  Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	Disabled bool     `yaml:"disabled,omitempty" json:"disabled,omitempty"`
	// RefreshInterval re-lists the server this often, for servers whose
	// lists change without list_changed (upstream/refresh.go); zero never
	// does.
	RefreshInterval Duration `yaml:"refresh_interval,omitempty" json:"refresh_interval,omitempty"`
}

// ProtocolVersions are the MCP revisions a server's protocol_version may
// name: those the hub's go-sdk speaks (upstream's tests check they agree).
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// MinRefreshInterval is the shortest refresh_interval accepted: the floor
// upstreams keep between two listings anyway.
const MinRefreshInterval = 250 * time.Millisecond

// Kind reports which transport the config selects.
func (c *Upstream) Kind() string {
	switch {
	case c.Builtin != "":
		return TransportBuiltin
	case c.URL != "":
		if c.Transport == "" {
			return TransportStreamable
		}
		return c.Transport
	default:
		return TransportStdio
	}
}

// CallTimeout is the effective per-call timeout.
func (c *Upstream) CallTimeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout)
	}
	return DefaultTimeout
}

// IsolationMode is Isolation with its default: IsolationShared for every
// server that is not stdio.
func (c *Upstream) IsolationMode() string {
	if c.Isolation == "" || c.Kind() != TransportStdio {
		return IsolationShared
	}
	return c.Isolation
}

// IsolatedLimit is MaxIsolatedProcesses with its default.
func (c *Upstream) IsolatedLimit() int {
	if c.MaxIsolatedProcesses > 0 {
		return c.MaxIsolatedProcesses
	}
	return DefaultMaxIsolatedProcesses
}

// IsolatedIdleTimeout is IsolationIdleTimeout with its default.
func (c *Upstream) IsolatedIdleTimeout() time.Duration {
	if c.IsolationIdleTimeout > 0 {
		return time.Duration(c.IsolationIdleTimeout)
	}
	return DefaultIsolationIdleTimeout
}

// validateIsolation checks the isolation keys and returns the key at
// fault with the message. Messages never repeat the value: a config's
// values may be secrets.
func (c *Upstream) validateIsolation() (key string, err error) {
	switch c.Isolation {
	case "", IsolationShared, IsolationPrincipal, IsolationSession:
	default:
		return "isolation", errors.New("isolation must be one of shared, principal or session")
	}
	switch {
	case c.Isolation != "" && c.Isolation != IsolationShared && c.Kind() != TransportStdio:
		return "isolation", errors.New("isolation applies to stdio servers only (a streamable HTTP server already runs each client session in a session of its own)")
	case c.MaxIsolatedProcesses < 0:
		return "max_isolated_processes", errors.New("max_isolated_processes must be positive (or left out for its default)")
	case c.IsolationIdleTimeout < 0:
		return "isolation_idle_timeout", errors.New("isolation_idle_timeout must be positive (or left out for its default)")
	}
	return "", nil
}

// Validate checks the fields that can be checked without connecting.
// Messages say what to change; the caller adds file and server context.
func (c *Upstream) Validate() error {
	set := 0
	for _, s := range []string{c.Command, c.URL, c.Builtin} {
		if s != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return fmt.Errorf("no transport: set one of 'command' (stdio), 'url' (HTTP) or 'builtin'")
	case set > 1:
		return fmt.Errorf("set only one of 'command', 'url' and 'builtin'")
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q is not an http(s) URL: write it like http://127.0.0.1:8080/mcp", c.URL)
		}
		switch c.Transport {
		case "", TransportStreamable, TransportSSE:
		default:
			return fmt.Errorf("transport %q is unknown: use 'streamable-http' (default) or 'sse'", c.Transport)
		}
	} else if c.Transport != "" && c.Transport != TransportStdio {
		return fmt.Errorf("'transport: %s' needs a 'url'", c.Transport)
	}
	if c.URL == "" && len(c.Headers) > 0 {
		return fmt.Errorf("'headers' only apply to url servers")
	}
	if c.OAuth != nil {
		if err := c.OAuth.validate(c); err != nil {
			return err
		}
	}
	if c.Command == "" && (len(c.Args) > 0 || c.Cwd != "") {
		return fmt.Errorf("'args' and 'cwd' need a 'command'")
	}
	if c.Timeout < 0 {
		return fmt.Errorf("timeout must be positive")
	}
	if v := c.ProtocolVersion; v != "" && !slices.Contains(ProtocolVersions, v) {
		return fmt.Errorf("protocol_version %q is not one the hub speaks: use one of %s, or leave it out", v, strings.Join(ProtocolVersions, ", "))
	}
	if c.ProtocolVersion != "" && c.Builtin != "" {
		return fmt.Errorf("'protocol_version' does not apply to builtin servers")
	}
	if c.RefreshInterval != 0 && time.Duration(c.RefreshInterval) < MinRefreshInterval {
		return fmt.Errorf("refresh_interval must be at least %s (or 0 for never)", MinRefreshInterval)
	}
	return nil
}

// Duration is a time.Duration that reads "30s" or a number of seconds.
type Duration time.Duration

// UnmarshalText accepts Go duration syntax ("1m30s") or plain seconds ("90").
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	var secs float64
	if _, err := fmt.Sscanf(s, "%g", &secs); err == nil {
		*d = Duration(time.Duration(secs * float64(time.Second)))
		return nil
	}
	return fmt.Errorf("invalid duration %q: write it like 30s or 2m", s)
}

// UnmarshalYAML is UnmarshalText with the value's line in the error.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if err := d.UnmarshalText([]byte(n.Value)); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// MarshalText writes Go duration syntax.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UpstreamOAuth is a server's optional `oauth:` block. None of it is needed
// for a server that supports Dynamic Client Registration.
type UpstreamOAuth struct {
	// ClientID and ClientSecret are a client registered beforehand at the
	// server's authorization server (its redirect URI must be
	// http://127.0.0.1:<redirect_port>/callback).
	ClientID     string `yaml:"client_id,omitempty" json:"client_id,omitempty"`
	ClientSecret string `yaml:"client_secret,omitempty" json:"client_secret,omitempty"`
	// ClientMetadataURL is an https URL serving a Client ID Metadata
	// Document that describes this hub; used when the authorization server
	// supports it, before the other ways.
	ClientMetadataURL string `yaml:"client_metadata_url,omitempty" json:"client_metadata_url,omitempty"`
	// Scopes to ask for instead of those the server advertises.
	Scopes []string `yaml:"scopes,omitempty" json:"scopes,omitempty"`
	// RedirectPort is the port of the 127.0.0.1 callback; 0 picks a free
	// one (and keeps it for as long as a dynamic registration lasts).
	RedirectPort int `yaml:"redirect_port,omitempty" json:"redirect_port,omitempty"`
}

func (o *UpstreamOAuth) validate(c *Upstream) error {
	switch {
	case c.URL == "":
		return errors.New("'oauth' only applies to url servers")
	case c.Kind() != TransportStreamable:
		return errors.New("'oauth' needs 'transport: streamable-http' (an SSE server takes static 'headers' only)")
	case o.ClientSecret != "" && o.ClientID == "":
		return errors.New("oauth.client_secret needs oauth.client_id")
	case o.RedirectPort < 0 || o.RedirectPort > 65535:
		return fmt.Errorf("oauth.redirect_port %d is not a port: use 1-65535, or leave it out for a free one", o.RedirectPort)
	case HasAuthorizationHeader(c.Headers):
		return errors.New("'oauth' and an Authorization header exclude each other: remove one")
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return fmt.Errorf("oauth.client_metadata_url %q must be an https URL with a path (where the Client ID Metadata Document is served)", o.ClientMetadataURL)
		}
	}
	return nil
}

// HasAuthorizationHeader reports whether h sets Authorization, in any case.
func HasAuthorizationHeader(h map[string]string) bool {
	for k := range h {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-hub/mcp-hub/internal/closest"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Config is a loaded hub.yaml (or Claude Desktop JSON) file.
type Config struct {
	// Path is the file the config was read from, for error messages.
	Path string `yaml:"-"`

	Servers   map[string]*Server  `yaml:"servers"`
	Discovery Discovery           `yaml:"discovery"`
	Toolsets  map[string]*Toolset `yaml:"toolsets"`
	Auth      Auth                `yaml:"auth"`
	Restart   Restart             `yaml:"restart"`
	Audit     Audit               `yaml:"audit"`
	Telemetry Telemetry           `yaml:"telemetry"`
	// SandboxDefault is the sandbox of every stdio server that has no
	// `sandbox:` of its own (config/sandbox.go).
	SandboxDefault *Sandbox `yaml:"sandbox_default"`
	// Protocol chooses the protocol eras the hub serves its clients
	// (docs/stateless-mcp.md).
	Protocol Protocol `yaml:"protocol"`
	// Pinning pins every tool definition the hub serves (package pin);
	// on unless `pinning: false`.
	Pinning Pinning `yaml:"pinning"`
	// MaxRequestBytes bounds one HTTP request body (default 4 MiB).
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxResultBytes bounds one message from an upstream, a tool result
	// above all (default 8 MiB); see ResultLimit.
	MaxResultBytes int64 `yaml:"max_result_bytes"`
	// MaxSessions bounds the HTTP sessions open at once (default 10,000).
	MaxSessions int `yaml:"max_sessions"`
	// MaxSubscriptionsPerPrincipal bounds the resource subscriptions one
	// principal holds open at once on a replica: its legacy
	// resources/subscribe and the URIs of its subscriptions/listen streams
	// together (default 1,000). Each may hold an upstream stream open.
	MaxSubscriptionsPerPrincipal int `yaml:"max_subscriptions_per_principal"`
	// SessionIdleTimeout closes an HTTP session that has had no request
	// for this long (default 30m).
	SessionIdleTimeout Duration `yaml:"session_idle_timeout"`
	// HTTP holds the HTTP server's timeouts and header limit.
	HTTP HTTPLimits `yaml:"http"`
	// MaxNameLength bounds every exposed tool and prompt name (default and
	// most MaxNameLength); longer names are cut and end in a stable hash.
	// Cursor counts its entry's name too: `install cursor` passes serve
	// --max-name-length, which overrides this.
	MaxNameLength int `yaml:"max_name_length"`
	// SessionStore keeps HTTP sessions where every replica finds them:
	// redis://[:PASSWORD@]HOST:PORT/DB or rediss:// (package gateway).
	SessionStore string `yaml:"session_store"`
	// HashKey keys the hashes of guessable values (package gateway); empty: a
	// key generated and kept in the state folder. Required with
	// SessionStore: replicas share it, and the store never holds it.
	HashKey string `yaml:"hash_key"`

	// The chat's sections (chat.go), which package chatloop runs on. They
	// are decoded by decodeChat, key by key, after the rest; knownKeys
	// lets the strict check of unknown keys know them.
	Providers map[string]Provider `yaml:"-"`
	Models    map[string]Model    `yaml:"-"`
	Chat      Chat                `yaml:"-"`
	Templates map[string]Template `yaml:"-"`

	// ServerOrder is the order servers appear in the file; the catalog
	// lists tools in this order.
	ServerOrder []string `yaml:"-"`
	// Secrets are the values that came from ${VAR} expansion, every
	// server's literal credentials (Upstream.SecretValues) and the
	// auth tokens. Logs, errors and /healthz redact them.
	Secrets []string `yaml:"-"`
	// Warnings are problems that do not stop the hub (an unset variable).
	Warnings []string `yaml:"-"`
}

// Server is one entry under `servers:`.
type Server struct {
	Upstream `yaml:",inline"`
	// Prefix replaces the server name in exposed names; "" exposes the
	// upstream names as they are. Nil means the server name.
	Prefix *string `yaml:"prefix"`
	// DeferLoading hides the server's tools behind search_tools.
	// Nil means "follow discovery.defer_all".
	DeferLoading *bool      `yaml:"defer_loading"`
	Tools        ToolFilter `yaml:"tools"`
	// Description says what the server is for; used in the search_tools
	// manifest and indexed for search.
	Description string `yaml:"description"`
}

// ToolFilter keeps or drops upstream tools by their original names.
type ToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// Discovery configures deferred tools and the meta-tools.
type Discovery struct {
	Enabled          bool  `yaml:"enabled"`
	DeferAll         bool  `yaml:"defer_all"`
	MaxSearchResults int   `yaml:"max_search_results"`
	CallTool         *bool `yaml:"call_tool"`
	AutoLoadOnCall   bool  `yaml:"auto_load_on_call"`
	// RelistWait bounds how long the result of a call that loaded tools
	// waits for the client to re-list its tools (hub/listchanged.go); nil is
	// DefaultRelistWait, 0 never waits.
	RelistWait *Duration `yaml:"relist_wait"`
	// Embeddings, when set, makes search hybrid: lexical fused with the
	// similarity of embedding vectors (hub/semantic.go).
	Embeddings *Embeddings `yaml:"embeddings"`
}

// Protocol is the config's `protocol:` section.
type Protocol struct {
	// Modern serves MCP 2026-07-28 (stateless requests, server/discover,
	// subscriptions/listen, input_required results) beside 2025-11-25 and
	// older; false answers a 2026-07-28 request with -32022 (unsupported
	// protocol version), so a client that speaks both falls back to
	// 2025-11-25. nil: DefaultModern.
	Modern *bool `yaml:"modern"`
	// MaxWaitingCalls bounds the modern calls waiting at once for their
	// client's answer to an input_required result (each holds its
	// upstream call open until answered or for 5 minutes); 0:
	// DefaultMaxWaitingCalls. Past it only the call that would wait is
	// refused.
	MaxWaitingCalls int `yaml:"max_waiting_calls"`
	// MaxWaitingCallsPerPrincipal is one principal's share of them, so
	// that one principal cannot fill them all; 0:
	// DefaultMaxWaitingCallsPerPrincipal.
	MaxWaitingCallsPerPrincipal int `yaml:"max_waiting_calls_per_principal"`
	// MaxListenURIs bounds the resource URIs one subscriptions/listen
	// request names (default 100).
	MaxListenURIs int `yaml:"max_listen_uris"`
}

// Defaults of protocol.max_waiting_calls and its per-principal share.
const (
	DefaultMaxWaitingCalls             = 1000
	DefaultMaxWaitingCallsPerPrincipal = 100
)

// WaitingLimits are protocol.max_waiting_calls and
// max_waiting_calls_per_principal with their defaults; the share is at
// most the total.
func (p Protocol) WaitingLimits() (total, perPrincipal int) {
	total, perPrincipal = p.MaxWaitingCalls, p.MaxWaitingCallsPerPrincipal
	if total <= 0 {
		total = DefaultMaxWaitingCalls
	}
	if perPrincipal <= 0 {
		perPrincipal = DefaultMaxWaitingCallsPerPrincipal
	}
	return total, min(perPrincipal, total)
}

// ListenURILimit is max_listen_uris with its default.
func (p Protocol) ListenURILimit() int {
	if p.MaxListenURIs > 0 {
		return p.MaxListenURIs
	}
	return DefaultMaxListenURIs
}

// DefaultModern is protocol.modern's default: on, so a client that speaks
// only 2026-07-28 connects with no configuration. A client of 2025-11-25
// sees no change: it never asks for the modern era. Both eras are safe to
// serve together because what an upstream sends reaches only the client
// whose call caused it (docs/security.md, "Attribution").
const DefaultModern = true

// ModernEnabled is protocol.modern with its default.
func (p Protocol) ModernEnabled() bool {
	if p.Modern == nil {
		return DefaultModern
	}
	return *p.Modern
}

// DefaultRelistWait is discovery.relist_wait's default: well above a
// client's re-list round trip, short next to a model call.
const DefaultRelistWait = 500 * time.Millisecond

// maxRelistWait bounds relist_wait: past it a client that never re-lists
// would make each session's first search look hung.
const maxRelistWait = 10 * time.Second

// RelistWaitOrDefault is relist_wait with its default.
func (d Discovery) RelistWaitOrDefault() time.Duration {
	if d.RelistWait == nil {
		return DefaultRelistWait
	}
	return time.Duration(*d.RelistWait)
}

// Defaults of the limits above.
const (
	DefaultMaxResultBytes     = 8 << 20
	DefaultMaxSessions        = 10000
	DefaultSessionIdleTimeout = 30 * time.Minute
	// A subscriptions/listen stream names the few resources a client
	// shows; each URI may cost an upstream stream (a stateless HTTP
	// upstream's listen), so one request may not open thousands.
	DefaultMaxListenURIs                = 100
	DefaultMaxSubscriptionsPerPrincipal = 1000
)

// NameLimit is max_name_length with its default.
func (c *Config) NameLimit() int {
	if c.MaxNameLength > 0 {
		return c.MaxNameLength
	}
	return MaxNameLength
}

// ResultLimit is max_result_bytes with its default: past it an upstream's
// answer is dropped and only its call fails. Builtin servers get it too.
func (c *Config) ResultLimit() int64 {
	if c.MaxResultBytes > 0 {
		return c.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// SessionLimit is max_sessions with its default.
func (c *Config) SessionLimit() int {
	if c.MaxSessions > 0 {
		return c.MaxSessions
	}
	return DefaultMaxSessions
}

// SubscriptionLimit is max_subscriptions_per_principal with its default.
func (c *Config) SubscriptionLimit() int {
	if c.MaxSubscriptionsPerPrincipal > 0 {
		return c.MaxSubscriptionsPerPrincipal
	}
	return DefaultMaxSubscriptionsPerPrincipal
}

// SessionTimeout is session_idle_timeout with its default.
func (c *Config) SessionTimeout() time.Duration {
	if c.SessionIdleTimeout > 0 {
		return time.Duration(c.SessionIdleTimeout)
	}
	return DefaultSessionIdleTimeout
}

// CallToolEnabled reports whether the call_tool meta-tool is offered (default on).
func (d Discovery) CallToolEnabled() bool { return d.CallTool == nil || *d.CallTool }

// SearchLimit is max_search_results with its default.
func (d Discovery) SearchLimit() int {
	if d.MaxSearchResults > 0 {
		return d.MaxSearchResults
	}
	return 5
}

// Auth protects the HTTP endpoints. Without Tokens and OAuth, there is no
// auth; `auth: none` says so on purpose (None), which a reload that drops
// auth needs (Weakening).
type Auth struct {
	// None is set by `auth: none`, written as it is in the file.
	None bool `yaml:"-"`
	// Tokens are accepted as `Authorization: Bearer <token>`.
	Tokens []Token `yaml:"tokens"`
	// AllowedOrigins are extra browser origins allowed to call /mcp.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// OAuth accepts JWT access tokens of an authorization server.
	OAuth *OAuth `yaml:"oauth"`
	// RateLimit limits requests per principal.
	RateLimit *RateLimit `yaml:"rate_limit"`
}

// Restart tunes upstream reconnection.
type Restart struct {
	InitialBackoff Duration `yaml:"initial_backoff"`
	MaxBackoff     Duration `yaml:"max_backoff"`
	UnhealthyAfter int      `yaml:"unhealthy_after"`
	// Cooldown is how long an unhealthy server's calls fail fast before
	// the hub probes it again (30s).
	Cooldown Duration `yaml:"cooldown"`
}

// Error is a problem in the config file. The CLI exits with code 2.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Load reads a hub.yaml file, or a Claude Desktop / Cursor JSON file
// with `mcpServers`, expands ${VAR} and ${VAR:-default}, and validates it.
// builtins are the names a server's `builtin:` may take (the program's
// in-process servers); nil accepts any.
func Load(path string, builtins []string) (*Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		if _, ok := err.(*Error); ok {
			return nil, err
		}
		return nil, &Error{Path: path, Msg: fmt.Sprintf("cannot read config: %v (create one from the bundled hub.yaml, or pass --config)", err)}
	}
	return Parse(path, data, builtins)
}

// MaxFileBytes caps a config file: far above any real config, it keeps
// a wrong file (a log, a disk image) from being read into memory.
const MaxFileBytes = 4 << 20

// ReadFile reads a config file of at most MaxFileBytes. A larger
// file is a *Error, found from its size before reading it, and
// never read past the cap if it grows meanwhile. Other errors are the
// file system's.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := &Error{Path: path, Msg: fmt.Sprintf("the file is larger than %d MiB, the cap on a config file: is it the right file?", MaxFileBytes>>20)}
	if st, err := f.Stat(); err == nil && st.Size() > MaxFileBytes {
		return nil, tooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, tooBig
	}
	return data, nil
}

// Parse is Load on bytes already read.
func Parse(path string, data []byte, builtins []string) (*Config, error) {
	if isJSONConfig(path, data) {
		return parseClaudeJSON(path, data, builtins)
	}
	return parseYAML(path, data, builtins)
}

func parseYAML(path string, data []byte, builtins []string) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(path, nil, err)
	}
	cfg := &Config{Path: path}
	if len(root.Content) == 0 {
		return nil, &Error{Path: path, Msg: "config is empty: add a 'servers:' section"}
	}
	if err := notAConfig(path, &root); err != nil {
		return nil, err
	}
	// Unknown keys are checked on the raw text so that their line numbers
	// are right; values are decoded after ${VAR} expansion.
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	var probe knownKeys
	if err := strict.Decode(&probe); err != nil {
		if err := unknownFieldErrors(path, &root, err); err != nil {
			return nil, err
		}
	}
	authNone := explicitNoAuth(&root)
	exp := expander{path: path}
	exp.walk(&root, nil, false)
	if len(exp.errs) > 0 {
		return nil, errors.Join(exp.errs...)
	}
	cfg.Secrets, cfg.Warnings = exp.secrets, exp.warnings
	if err := root.Decode(cfg); err != nil {
		return nil, yamlError(path, &root, err)
	}
	chatErr := cfg.decodeChat(&root)
	cfg.Auth.None = authNone
	cfg.ServerOrder = mappingKeys(&root, "servers")
	addSecret := func(v string) {
		if v != "" && !slices.Contains(cfg.Secrets, v) {
			cfg.Secrets = append(cfg.Secrets, v)
		}
	}
	for _, name := range cfg.ServerOrder {
		if sc := cfg.Servers[name]; sc != nil {
			for _, v := range sc.SecretValues() {
				addSecret(v)
			}
		}
	}
	addSecret(cfg.HashKey)
	for _, tok := range cfg.Auth.TokenValues() {
		if len(tok) >= 4 {
			addSecret(tok)
		}
	}
	if u, err := url.Parse(cfg.SessionStore); err == nil {
		if p, ok := u.User.Password(); ok {
			addSecret(p)
		}
	}
	err := cfg.validate(lineFinder(&root), builtins)
	if chatErr != nil {
		err = errors.Join(err, chatErr)
	}
	return cfg, redactConfigError(err, cfg.Secrets)
}

// redactConfigError removes secrets from validation messages, which quote
// values (a URL, say) after ${VAR} expansion.
func redactConfigError(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	r := redact.New(secrets)
	var redact func(error) error
	redact = func(err error) error {
		switch e := err.(type) {
		case *Error:
			c := *e
			c.Msg = r.String(c.Msg)
			return &c
		case interface{ Unwrap() []error }:
			var out []error
			for _, inner := range e.Unwrap() {
				out = append(out, redact(inner))
			}
			return errors.Join(out...)
		}
		return r.Error(err)
	}
	return redact(err)
}

// validate checks what can be checked without connecting.
func (c *Config) validate(line func(keys ...string) int, builtins []string) error {
	if len(c.Servers) == 0 {
		return &Error{Path: c.Path, Msg: "no servers configured: add at least one under 'servers:' (see the bundled hub.yaml)"}
	}
	var errs []error
	if c.SandboxDefault != nil { // before the servers, which copy it
		errs = append(errs, c.validateSandbox(c.SandboxDefault, "sandbox_default", []string{"sandbox_default"}, line)...)
	}
	for _, name := range c.ServerOrder {
		s := c.Servers[name]
		if s == nil {
			errs = append(errs, &Error{Path: c.Path, Line: line("servers", name), Msg: fmt.Sprintf("server '%s' is empty: give it a 'command', 'url' or 'builtin'", name)})
			continue
		}
		s.Name = name
		if strings.TrimSpace(name) == "" {
			errs = append(errs, &Error{Path: c.Path, Line: line("servers"), Msg: "a server has an empty name"})
		}
		if err := s.Validate(); err != nil {
			errs = append(errs, &Error{Path: c.Path, Line: line("servers", name), Msg: fmt.Sprintf("server '%s': %v", name, err)})
		}
		if key, err := s.validateIsolation(); err != nil {
			errs = append(errs, &Error{Path: c.Path, Line: line("servers", name, key), Msg: fmt.Sprintf("server '%s': %v", name, err)})
		}
		errs = append(errs, c.serverSandbox(s, line)...)
		if s.Builtin != "" && builtins != nil && !slices.Contains(builtins, s.Builtin) {
			errs = append(errs, &Error{Path: c.Path, Line: line("servers", name, "builtin"),
				Msg: fmt.Sprintf("server '%s': unknown builtin '%s'; available: %s", name, s.Builtin, strings.Join(builtins, ", "))})
		}
	}
	for tsName, ts := range c.Toolsets {
		if ts == nil {
			continue
		}
		for srv := range ts.Servers {
			if _, ok := c.Servers[srv]; !ok {
				errs = append(errs, &Error{Path: c.Path, Line: line("toolsets", tsName, "servers", srv),
					Msg: fmt.Sprintf("toolset '%s': Server '%s' not found in configuration; servers: %s", tsName, srv, strings.Join(sortedKeys(c.Servers), ", "))})
			}
		}
	}
	for _, lim := range []struct {
		key      string
		negative bool
	}{
		{"max_request_bytes", c.MaxRequestBytes < 0},
		{"max_result_bytes", c.MaxResultBytes < 0},
		{"max_sessions", c.MaxSessions < 0},
		{"max_subscriptions_per_principal", c.MaxSubscriptionsPerPrincipal < 0},
		{"protocol.max_listen_uris", c.Protocol.MaxListenURIs < 0},
		{"session_idle_timeout", c.SessionIdleTimeout < 0},
		{"http.read_header_timeout", c.HTTP.ReadHeaderTimeout < 0},
		{"http.body_read_timeout", c.HTTP.BodyReadTimeout < 0},
		{"http.idle_timeout", c.HTTP.IdleTimeout < 0},
		{"http.max_header_bytes", c.HTTP.MaxHeaderBytes < 0},
		{"protocol.max_waiting_calls", c.Protocol.MaxWaitingCalls < 0},
		{"protocol.max_waiting_calls_per_principal", c.Protocol.MaxWaitingCallsPerPrincipal < 0},
	} {
		if lim.negative {
			errs = append(errs, &Error{Path: c.Path, Line: line(strings.Split(lim.key, ".")...), Msg: lim.key + " must be positive (or left out for its default)"})
		}
	}
	if n := c.MaxNameLength; n != 0 && (n < MinNameLength || n > MaxNameLength) {
		errs = append(errs, &Error{Path: c.Path, Line: line("max_name_length"),
			Msg: fmt.Sprintf("max_name_length must be between %d and %d", MinNameLength, MaxNameLength)})
	}
	if c.SessionStore != "" {
		if err := checkSessionStore(c.SessionStore); err != nil {
			errs = append(errs, &Error{Path: c.Path, Line: line("session_store"), Msg: err.Error()})
		}
	}
	errs = append(errs, c.validateIdentity(line)...)
	if c.Discovery.MaxSearchResults < 0 {
		errs = append(errs, &Error{Path: c.Path, Line: line("discovery", "max_search_results"), Msg: "discovery.max_search_results must be positive"})
	}
	if w := c.Discovery.RelistWait; w != nil && (*w < 0 || time.Duration(*w) > maxRelistWait) {
		errs = append(errs, &Error{Path: c.Path, Line: line("discovery", "relist_wait"),
			Msg: fmt.Sprintf("discovery.relist_wait must be between 0 (never wait) and %s", maxRelistWait)})
	}
	if e := c.Discovery.Embeddings; e != nil {
		if _, err := e.Normalize(); err != nil {
			errs = append(errs, &Error{Path: c.Path, Line: line("discovery", "embeddings"), Msg: "discovery." + err.Error()})
		}
	}
	errs = append(errs, c.validateGateway(line)...)
	return errors.Join(errs...)
}

// Deferred reports whether a server's tools start deferred.
func (c *Config) Deferred(server string) bool {
	if !c.Discovery.Enabled {
		return false
	}
	s := c.Servers[server]
	if s != nil && s.DeferLoading != nil {
		return *s.DeferLoading
	}
	return c.Discovery.DeferAll
}

var unknownField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+): field (\S+) not found in type (\S+)`) })

// unknownFieldErrors turns yaml.v3's strict-mode errors into our wording
// (file:line, the server, the closest known key), and drops the type
// errors that ${VAR} placeholders cause before expansion.
func unknownFieldErrors(path string, root *yaml.Node, err error) error {
	var errs []error
	for _, m := range unknownField().FindAllStringSubmatch(err.Error(), -1) {
		line, _ := strconv.Atoi(m[1])
		msg := fmt.Sprintf("unknown key '%s'", m[2])
		if close := closest.Closest(m[2], yamlKeys(configTypes[m[3]]), 1); len(close) > 0 {
			msg += fmt.Sprintf("; did you mean '%s'?", close[0])
		}
		msg += " (check the spelling; see the config reference in README.md)"
		if m[3] == "config.Server" || m[3] == "config.ToolFilter" {
			if server := serverAtLine(root, line); server != "" {
				msg = fmt.Sprintf("server '%s': %s", server, msg)
			}
		}
		errs = append(errs, &Error{Path: path, Line: line, Msg: msg})
	}
	return errors.Join(errs...)
}

// knownKeys is Config as the strict check of unknown keys sees it: the
// chat's sections are known keys, and decodeChat checks inside them.
type knownKeys struct {
	Config       `yaml:",inline"`
	chatSections `yaml:",inline"`
}

type chatSections struct {
	Providers yaml.Node `yaml:"providers"`
	Models    yaml.Node `yaml:"models"`
	Chat      yaml.Node `yaml:"chat"`
	Templates yaml.Node `yaml:"templates"`
}

// configTypes are the config structs by the name yaml.v3 gives them in errors.
var configTypes = map[string]reflect.Type{
	"config.knownKeys":  reflect.TypeFor[knownKeys](),
	"config.Config":     reflect.TypeFor[Config](),
	"config.Server":     reflect.TypeFor[Server](),
	"config.ToolFilter": reflect.TypeFor[ToolFilter](),
	"config.Discovery":  reflect.TypeFor[Discovery](),
	"config.Auth":       reflect.TypeFor[Auth](),
	"config.Restart":    reflect.TypeFor[Restart](),
	"config.OAuth":      reflect.TypeFor[OAuth](),
	"config.RateLimit":  reflect.TypeFor[RateLimit](),
	"config.Rate":       reflect.TypeFor[Rate](),
	"config.Audit":      reflect.TypeFor[Audit](),
	"config.Telemetry":  reflect.TypeFor[Telemetry](),
	"config.HTTPLimits": reflect.TypeFor[HTTPLimits](),
	"config.Toolset":    reflect.TypeFor[Toolset](),
}

// yamlKeys lists the keys a struct type accepts, following inlined structs.
func yamlKeys(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "inline"):
			keys = append(keys, yamlKeys(f.Type)...)
		case !f.IsExported():
		case name == "":
			keys = append(keys, strings.ToLower(f.Name))
		default:
			keys = append(keys, name)
		}
	}
	return keys
}

// serverAtLine names the server whose entry holds line, or "" when the
// line is outside the servers section.
func serverAtLine(root *yaml.Node, line int) string {
	if root == nil || line <= 0 {
		return ""
	}
	doc := docMapping(root)
	if doc.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "servers" {
			continue
		}
		if i+2 < len(doc.Content) && doc.Content[i+2].Line <= line {
			return "" // in a later section
		}
		servers := doc.Content[i+1]
		if servers.Kind != yaml.MappingNode {
			return ""
		}
		name := ""
		for j := 0; j+1 < len(servers.Content); j += 2 {
			if servers.Content[j].Line > line {
				break
			}
			name = servers.Content[j].Value
		}
		return name
	}
	return ""
}

// notAConfig refuses, without quoting it, a file that is plainly not an
// mcp-hub config (the config path points at another file): its top level
// is not a mapping, or none of its keys is a config key or close to one.
func notAConfig(path string, root *yaml.Node) error {
	doc := docMapping(root)
	err := &Error{Path: path, Line: doc.Line, Msg: "this is not an mcp-hub config: expected a YAML mapping of config keys (servers:, auth:, ...); is --config the right file?"}
	if doc.Kind != yaml.MappingNode {
		return err
	}
	known := yamlKeys(configTypes["config.Config"])
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k := doc.Content[i].Value
		if slices.Contains(known, k) || len(closest.Closest(k, known, 1)) > 0 {
			return nil
		}
	}
	return err
}

var (
	yamlLine     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })
	duplicateKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mapping key "(.*)" already defined at line (\d+)$`) })
	cannotDecode = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^cannot unmarshal (!!\w+)(?: ` + "`" + `[^` + "`" + `]*` + "`" + `)? into (\S+)$`)
	})
	singleQuoted  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` ?'[^']{2,}'`) }) // ':' and the like are yaml.v3's grammar
	quotedContent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` ?(?:"(?:[^"\\]|\\.)*"|` + "`[^`]*`" + `)`) })
)

// yamlError reports a YAML syntax or type error at its line and key, and
// names the server when the line is in one (root is nil for syntax
// errors). It never quotes the file: yaml.v3 and the decoders of our
// types quote values, and a value may be a secret from ${VAR} or, when
// the config path points at another file, that file's content.
func yamlError(path string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs []error
		for _, msg := range te.Errors {
			errs = append(errs, yamlMessage(path, root, msg))
		}
		return errors.Join(errs...)
	}
	return yamlMessage(path, root, strings.TrimPrefix(err.Error(), "yaml: "))
}

func yamlMessage(path string, root *yaml.Node, msg string) error {
	line := 0
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	if m := duplicateKey().FindStringSubmatch(msg); m != nil {
		return &Error{Path: path, Line: line, Msg: fmt.Sprintf("'%s' is defined twice (first at line %s): server names and keys must be unique; rename or remove one", m[1], m[2])}
	}
	if m := cannotDecode().FindStringSubmatch(msg); m != nil {
		msg = "expected " + expectedValue(m[2])
		if key := keyAtLine(root, line); key != "" {
			msg = "key " + key + ": " + msg
		}
	} else {
		msg = quotedContent().ReplaceAllString(msg, "")
		if root == nil { // yaml.v3's own words: any quote is the file's (an anchor's name)
			msg = singleQuoted().ReplaceAllString(msg, "")
		}
	}
	switch server := serverAtLine(root, line); {
	case root == nil:
		msg = "invalid YAML: " + msg
	case server != "":
		msg = fmt.Sprintf("server '%s': %s", server, msg)
	}
	return &Error{Path: path, Line: line, Msg: msg}
}

// expectedValue says what a Go type in a yaml.v3 error takes, in config words.
func expectedValue(goType string) string {
	switch t := strings.TrimLeft(goType, "*"); {
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	default: // a map or one of our structs
		return "a mapping of keys"
	}
}

// keyAtLine is the config key of the value(s) at line: the one scalar
// there, or what the values on the line have in common (a flow mapping).
func keyAtLine(root *yaml.Node, line int) string {
	if root == nil || line <= 0 {
		return ""
	}
	var paths [][]string
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		if n.Line == line && n.Kind == yaml.ScalarNode || n.Line == line && len(n.Content) == 0 {
			paths = append(paths, path)
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], append(slices.Clip(path), n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, append(slices.Clip(path), fmt.Sprintf("[%d]", i)))
			}
		}
	}
	walk(root, nil)
	if len(paths) == 0 {
		return ""
	}
	common := paths[0]
	for _, p := range paths[1:] {
		n := 0
		for n < len(common) && n < len(p) && common[n] == p[n] {
			n++
		}
		common = common[:n]
	}
	return keyPath(common)
}

// expander replaces ${VAR} and ${VAR:-default} in every scalar of the
// parsed document, so that a value can never change the document's shape:
// a list item that expands empty stays an (empty) item, and a key's value
// that expands empty is null, the key's default. In a credential key
// (credentialKeys) a variable that expands empty is an error instead.
type expander struct {
	path     string
	secrets  []string
	warnings []string
	errs     []error
}

var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })

// credentialKeys are the parts of the config where an empty value would
// weaken the hub rather than leave a feature off: auth (tokens, OAuth
// issuer/audience/keys/scopes/claim, rate limits), the session store's URL
// (its password), the audit file, and what the hub sends upstream to prove
// who it is (headers such as Authorization, a server's OAuth client). "*"
// is any key. A scalar at, below or above one of these paths is a
// credential: `auth: ${X}` would drop the whole block.
var credentialKeys = [][]string{
	{"auth"},
	{"session_store"},
	{"hash_key"},
	{"audit", "file"},
	{"servers", "*", "headers"},
	{"servers", "*", "oauth"},
}

// isCredential reports whether a scalar at path is part of a credential key.
func isCredential(path []string) bool {
	for _, key := range credentialKeys {
		match := true
		for i := 0; i < len(path) && i < len(key); i++ {
			if key[i] != "*" && key[i] != path[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// keyPath writes path as config keys: auth.tokens[0], servers.gh.headers.Authorization.
func keyPath(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		if b.Len() > 0 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// walk expands n and everything below it; path is n's place in the
// document, inSeq says n is a list item.
func (e *expander) walk(n *yaml.Node, path []string, inSeq bool) {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		n.Value = e.expand(n.Value, n.Line, path)
		// A value that came from a variable is a string even if it looks
		// like a number; let the target type decide. An empty list item
		// stays a string: as null, yaml.v3 would drop it from the list.
		if n.Tag == "!!str" {
			n.Tag = ""
		}
		if inSeq && n.Value == "" {
			n.Tag = "!!str"
		}
		n.Style = 0
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			e.walk(c, path, false)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			e.walk(n.Content[i], path, false)
			e.walk(n.Content[i+1], append(slices.Clip(path), n.Content[i].Value), false)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			item := append(slices.Clip(path), fmt.Sprintf("[%d]", i))
			if c.Kind == yaml.ScalarNode && !strings.Contains(c.Value, "${") && isCredential(item) &&
				(c.ShortTag() == "!!null" || strings.TrimSpace(c.Value) == "") {
				// Written empty (or ~): yaml.v3 would drop a null item.
				e.errs = append(e.errs, &Error{Path: e.path, Line: c.Line, Msg: fmt.Sprintf(
					"%s is empty; a token, key, scope, claim or credential must not be empty (remove the entry)", keyPath(item))})
			}
			e.walk(c, item, true)
		}
	}
}

func (e *expander) expand(s string, line int, path []string) string {
	credential := isCredential(path)
	return envRef().ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef().FindStringSubmatch(ref)
		name, hasDefault, def := m[1], m[2] != "", m[3]
		v, set := os.LookupEnv(name)
		fromEnv := !hasDefault || v != ""
		if !fromEnv {
			v = def // written in the file: not a secret
		}
		if strings.TrimSpace(v) == "" {
			why := "is empty"
			switch {
			case !set && hasDefault:
				why = "is not set and its default is empty"
			case !set:
				why = "is not set"
			}
			if credential {
				// Never the value: it is empty, or blank.
				e.errs = append(e.errs, &Error{Path: e.path, Line: line, Msg: fmt.Sprintf(
					"%s: environment variable %s %s; a token, key, scope, claim or credential must not be empty (set %s, or remove the key)",
					keyPath(path), name, why, name)})
				return v
			}
			if !set && !hasDefault {
				e.warnings = append(e.warnings, fmt.Sprintf("%s:%d: environment variable %s is not set; using an empty value (export it, or write ${%s:-default})", e.path, line, name, name))
			}
			return v
		}
		if fromEnv && len(v) >= 4 {
			e.secrets = append(e.secrets, v)
		}
		return v
	})
}

// mappingKeys returns the keys of root[section] in file order.
func mappingKeys(root *yaml.Node, section string) []string {
	m := child(docMapping(root), section)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	return keys
}

func docMapping(root *yaml.Node) *yaml.Node {
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		return root.Content[0]
	}
	return root
}

func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// lineFinder returns the line of a nested key, or of its nearest parent.
func lineFinder(root *yaml.Node) func(keys ...string) int {
	return func(keys ...string) int {
		n := docMapping(root)
		line := 0
		for _, k := range keys {
			if n == nil || n.Kind != yaml.MappingNode {
				break
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				break
			}
		}
		return line
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isJSONConfig(path string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return true
	}
	return bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && bytes.Contains(data, []byte(`"mcpServers"`))
}

// parseClaudeJSON reads the `mcpServers` map that Claude Desktop, Cursor
// and others use. Other top-level keys belong to those apps and are ignored.
func parseClaudeJSON(path string, data []byte, builtins []string) (*Config, error) {
	out, err := claudeJSONAsYAML(path, data)
	if err != nil {
		return nil, err
	}
	cfg, err := parseYAML(path, out, builtins)
	return cfg, relineJSON(err, data)
}

// claudeJSONAsYAML translates the servers of a Claude-shaped JSON config
// into a hub.yaml document, so that one code path expands and validates.
func claudeJSONAsYAML(path string, data []byte) ([]byte, error) {
	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"` // VS Code's mcp.json
	}
	if err := json.Unmarshal(data, &file); err != nil {
		line := 0
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) && syntax.Offset <= int64(len(data)) {
			line = bytes.Count(data[:syntax.Offset], []byte("\n")) + 1
		}
		return nil, &Error{Path: path, Line: line, Msg: fmt.Sprintf("invalid JSON: %v", err)}
	}
	servers, section := file.MCPServers, "mcpServers"
	if servers == nil {
		servers, section = file.Servers, "servers"
	}
	if name, dup := duplicateJSONServer(data, section); dup {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("server '%s' is defined twice in '%s': server names must be unique; rename or remove one", name, section)}
	}
	if servers == nil {
		return nil, &Error{Path: path, Msg: "no 'mcpServers' object: a JSON config must look like Claude Desktop's {\"mcpServers\": {...}}"}
	}
	// Translate into YAML so that one code path expands and validates.
	doc := map[string]any{}
	order := orderedJSONKeys(data, servers)
	yservers := yaml.Node{Kind: yaml.MappingNode}
	for _, name := range order {
		var entry map[string]any
		if err := json.Unmarshal(servers[name], &entry); err != nil {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("server '%s': %v", name, err)}
		}
		if t, ok := entry["type"].(string); ok {
			delete(entry, "type")
			switch t {
			case "http", "streamable-http", "streamableHttp":
				entry["transport"] = TransportStreamable
			case "sse":
				entry["transport"] = TransportSSE
			}
		}
		if u, ok := entry["serverUrl"]; ok { // Windsurf spelling
			entry["url"] = u
			delete(entry, "serverUrl")
		}
		// Other apps' own keys (autoApprove, alwaysAllow, ...) mean nothing here.
		for key := range entry {
			if !jsonServerKeys[key] {
				delete(entry, key)
			}
		}
		var k, v yaml.Node
		k.SetString(name)
		if err := v.Encode(entry); err != nil {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("server '%s': %v", name, err)}
		}
		yservers.Content = append(yservers.Content, &k, &v)
	}
	doc["servers"] = &yservers
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	return out, nil
}

// Servers reads the servers of a config file as they are written: in file
// order, without ${VAR} expansion or validation (`mcp-hub import` compares
// them with a client's entries before it adds to the file). A value that
// is a ${VAR} placeholder where the entry wants another type than a string
// is left at its zero value. data may be empty.
func Servers(path string, data []byte) ([]string, map[string]*Server, error) {
	servers := map[string]*Server{}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, servers, nil
	}
	raw, isJSON := data, isJSONConfig(path, data)
	reline := func(err error) error {
		if isJSON {
			return relineJSON(err, raw)
		}
		return err
	}
	if isJSON {
		var err error
		if data, err = claudeJSONAsYAML(path, data); err != nil {
			return nil, nil, err
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, reline(yamlError(path, nil, err))
	}
	var file struct {
		Servers map[string]*Server `yaml:"servers"`
	}
	if err := root.Decode(&file); err != nil {
		te, ok := err.(*yaml.TypeError)
		if !ok {
			return nil, nil, reline(yamlError(path, &root, err))
		}
		for _, msg := range te.Errors {
			if !strings.Contains(msg, "${") {
				return nil, nil, reline(yamlError(path, &root, err))
			}
		}
	}
	order := mappingKeys(&root, "servers")
	for _, name := range order {
		if file.Servers[name] == nil {
			file.Servers[name] = &Server{}
		}
		file.Servers[name].Name = name
	}
	if file.Servers == nil {
		file.Servers = servers
	}
	return order, file.Servers, nil
}

// relineJSON points errors found in the YAML translation of a JSON config
// at the JSON file's lines: the server's entry, or none.
func relineJSON(err error, data []byte) error {
	switch e := err.(type) {
	case *Error:
		c := *e
		c.Line = 0
		if name, ok := strings.CutPrefix(c.Msg, "server '"); ok {
			if name, _, ok = strings.Cut(name, "'"); ok {
				c.Line = jsonKeyLine(data, name)
			}
		}
		return &c
	case interface{ Unwrap() []error }:
		var out []error
		for _, inner := range e.Unwrap() {
			out = append(out, relineJSON(inner, data))
		}
		return errors.Join(out...)
	}
	return err
}

// jsonKeyLine is the line of the first `"key":` in data, or 0.
func jsonKeyLine(data []byte, key string) int {
	k, _ := json.Marshal(key)
	for off := 0; ; {
		i := bytes.Index(data[off:], k)
		if i < 0 {
			return 0
		}
		off += i + len(k)
		if rest := bytes.TrimLeft(data[off:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			return bytes.Count(data[:off], []byte("\n")) + 1
		}
	}
}

// duplicateJSONServer finds a server name given twice in the servers
// object (encoding/json silently keeps the last).
func duplicateJSONServer(data []byte, section string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", false
		}
		if key != section {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return "", false
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return "", false
		}
		seen := map[string]bool{}
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return "", false
			}
			n, _ := name.(string)
			if seen[n] {
				return n, true
			}
			seen[n] = true
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return "", false
			}
		}
		return "", false
	}
	return "", false
}

// jsonServerKeys are the keys of a JSON server entry that mean something to the hub.
var jsonServerKeys = map[string]bool{"command": true, "args": true, "env": true, "cwd": true,
	"url": true, "transport": true, "headers": true, "disabled": true, "timeout": true}

// orderedJSONKeys returns the server names in file order.
func orderedJSONKeys(data []byte, servers map[string]json.RawMessage) []string {
	names := sortedKeys(servers)
	sort.SliceStable(names, func(i, j int) bool {
		return bytes.Index(data, []byte(`"`+names[i]+`"`)) < bytes.Index(data, []byte(`"`+names[j]+`"`))
	})
	return names
}

// MaxNameLength is the longest tool name the hub exposes, and the default
// of max_name_length. Claude, OpenAI, Gemini and VS Code all reject longer
// names.
const MaxNameLength = 64

// MinNameLength is the least max_name_length may be: a cut name keeps a
// readable start before its 9-character hash, and the meta-tools fit.
const MinNameLength = 24

// DefaultMaxRequestBytes bounds one request: an HTTP body, a stdio line.
const DefaultMaxRequestBytes = 4 << 20

// RequestLimit is max_request_bytes with its default.
func (c *Config) RequestLimit() int64 {
	if c.MaxRequestBytes > 0 {
		return c.MaxRequestBytes
	}
	return DefaultMaxRequestBytes
}

// Keeps applies allow (if any) then deny; entries may be glob patterns.
func (f ToolFilter) Keeps(name string) bool {
	match := func(patterns []string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok || p == name {
				return true
			}
		}
		return false
	}
	if len(f.Allow) > 0 && !match(f.Allow) {
		return false
	}
	return !match(f.Deny)
}

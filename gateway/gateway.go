package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/pin"
)

// Options tune a Gateway.
type Options struct {
	// hub.Hub are the options of the hub the gateway runs. Its Hooks are the
	// gateway's own; a nil Redactor is made here, so that the hub and the
	// gateway redact the same secrets.
	Hub hub.Options
	// TracerProvider, if set, traces every client request and upstream
	// call (telemetry.go); nil or a no-op provider: tracing is off. The
	// caller owns it: it shuts it down after Close, which flushes the
	// spans still queued.
	TracerProvider trace.TracerProvider
	// StateDir is where a generated hash key is kept when the config sets
	// no hash_key (default: tokenstore.DefaultDir).
	StateDir string
	// OpenStore opens the config's session_store URL (cmd/mcp-hub:
	// redisstore.Open). Nil: a config that sets session_store is refused.
	OpenStore func(url string) (SessionStore, error)
}

// Gateway is a hub served to a team: over streamable HTTP, behind auth,
// with metrics, tracing, an audit log and a session store.
type Gateway struct {
	hub    *hub.Hub
	log    *slog.Logger
	redact *redact.Redactor

	// Who may connect (swapped whole on a config change), and what the
	// gateway reports (tracing and audit are nil when off).
	auth    atomic.Pointer[authenticator]
	metrics *metricSet
	tracing *tracing
	audit   *auditLog
	// callTrace is what the gateway hears of each request (observe.go).
	callTrace hub.CallTrace

	slots sessionSlots // HTTP sessions open, against max_sessions
	// modern are the hub's shared Sessions of 2026-07-28 requests (modern.go).
	modern modernSessions
	// pins record each tool held back by its pin or served again
	// (pins.go).
	pins pinWatch
	// storeLink keeps HTTP sessions in session_store (restore.go).
	storeLink sessionStoreLink
	// hashKey keys the hashes of guessable values (hashkey.go); nil until
	// the config needs one. stateDir is where a generated one is kept.
	hashKey  atomic.Pointer[keyedHash]
	stateDir string

	applyMu   sync.Mutex // serialises Apply
	closeOnce sync.Once
}

// New sets up the gateway's pieces for cfg (a problem with any of them is
// a *hub.ConfigError), then starts the hub (hub.New) with the gateway's
// hooks on it.
func New(ctx context.Context, cfg *config.Config, opts Options) (*Gateway, error) {
	if opts.Hub.Logger == nil {
		opts.Hub.Logger = slog.Default()
	}
	if opts.Hub.Redactor == nil {
		opts.Hub.Redactor = redact.New()
	}
	g := &Gateway{
		log:      opts.Hub.Logger,
		redact:   opts.Hub.Redactor,
		tracing:  newTracing(opts.TracerProvider),
		stateDir: opts.StateDir,
	}
	// The hub adds them too; the gateway's errors below need them first.
	g.redact.Add(cfg.Secrets...)
	g.redact.Add(cfg.Auth.TokenValues()...)
	for _, name := range cfg.ServerOrder {
		g.redact.Add(cfg.Servers[name].SecretValues()...)
	}
	g.callTrace = g.newCallTrace()
	if cfg.SessionStore != "" {
		if cfg.HashKey == "" {
			// Package config refuses this too; a config built in code
			// must not fall back to a key of one replica's own.
			return nil, &config.Error{Path: cfg.Path, Msg: config.SessionStoreNeedsHashKey}
		}
		if opts.OpenStore == nil {
			return nil, &config.Error{Path: cfg.Path, Msg: "session_store: this program has no session store"}
		}
		store, err := opts.OpenStore(cfg.SessionStore)
		if err != nil {
			return nil, &config.Error{Path: cfg.Path, Msg: g.redact.String(err.Error())}
		}
		if ps, ok := store.(PinSharer); ok && opts.Hub.Pins == nil {
			// Replicas share their pins (pins.go).
			opts.Hub.Pins = pin.NewStore(ps.PinBackend())
		}
		g.startSessionStore(store, cfg)
	}
	if _, err := g.keyFor(cfg, needsHashKey(cfg)); err != nil {
		g.storeLink.close()
		return nil, err
	}
	if err := g.startReporting(cfg); err != nil {
		g.storeLink.close()
		return nil, err
	}
	opts.Hub.Hooks = hub.Hooks{
		Observe:        g.observe,
		SessionStarted: g.sessionStarted,
		SessionEnded:   g.sessionEnded,
		ToolsLoaded:    g.toolsLoaded,
		CatalogSwapped: g.catalogSwapped,
	}
	h, err := hub.New(ctx, cfg, opts.Hub)
	if err != nil {
		g.storeLink.close()
		g.stopReporting()
		return nil, err
	}
	g.hub = h
	return g, nil
}

// hub.Hub is the hub the gateway serves.
func (g *Gateway) Hub() *hub.Hub { return g.hub }

// hub.Config is the hub's configuration in service.
func (g *Gateway) Config() *config.Config { return g.hub.Config() }

// Close closes the hub, then the session store and the audit log. It
// returns what failed (errors.Join), the first time; nil after.
func (g *Gateway) Close() error {
	var errs []error
	g.closeOnce.Do(func() {
		g.modern.closeAll()
		errs = append(errs, g.hub.Close(), g.storeLink.close(), g.stopReporting())
	})
	return errors.Join(errs...)
}

// Apply makes the gateway and its hub serve cfg (hub.Hub.Apply). Who may
// connect changes for the next request; a bad auth block is refused before
// anything changes.
func (g *Gateway) Apply(ctx context.Context, cfg *config.Config) error {
	g.applyMu.Lock()
	defer g.applyMu.Unlock()
	authChanged := !reflect.DeepEqual(g.hub.Config().Auth, cfg.Auth)
	if _, err := g.keyFor(cfg, authChanged && authNeedsHashKey(cfg.Auth)); err != nil {
		return err
	}
	if authChanged && cfg.Auth.OAuth != nil {
		if err := cfg.Auth.OAuth.Validate(); err != nil {
			return &config.Error{Path: cfg.Path, Msg: err.Error()}
		}
	}
	if err := g.hub.Apply(ctx, cfg); err != nil {
		return err
	}
	if authChanged {
		g.setAuth(cfg.Auth) // validated above
	}
	return nil
}

// ReloadFailed records a reload that did not apply (hub.Hub.ReloadFailed).
func (g *Gateway) ReloadFailed(err error) { g.hub.ReloadFailed(err) }

// startReporting sets up auth, metrics and the audit log (tracing is the
// caller's: Options.TracerProvider). A problem with any of them is a config
// error.
func (g *Gateway) startReporting(cfg *config.Config) error {
	if cfg.Auth.OAuth != nil {
		if err := cfg.Auth.OAuth.Validate(); err != nil {
			return &config.Error{Path: cfg.Path, Msg: err.Error()}
		}
	}
	g.auth.Store(newAuthenticator(cfg.Auth, g.hashKey.Load(), g.log))
	g.metrics = newMetrics(g)
	var err error
	g.audit, err = openAudit(cfg, g.hashKey.Load(), g.redact, g.log)
	return err
}

// stopReporting closes the audit log. The spans still queued are the
// tracer provider's: its owner flushes them after Close.
func (g *Gateway) stopReporting() error {
	err := g.audit.close()
	g.authn().close()
	return err
}

// mountGateway adds the team-deployment endpoints to the hub's HTTP mux:
// /metrics behind the same guard as /mcp, and the RFC 9728 metadata
// (without auth, for clients to discover where to log in, but behind the
// Host and Origin checks like every path).
func (g *Gateway) mountGateway(mux *http.ServeMux) {
	mux.Handle("/metrics", g.guard(g.MetricsHandler()))
	prm := g.guardOrigin(http.HandlerFunc(g.servePRM))
	mux.Handle(wellKnownPRM, prm)
	mux.Handle(wellKnownPRM+"/", prm)
}

// MetricsHandler serves the hub's Prometheus metrics, unguarded: HTTPHandler
// mounts it at /metrics behind auth; MetricsHTTPHandler guards it for a
// listener of its own.
func (g *Gateway) MetricsHandler() http.Handler { return g.metrics.handler() }

// MetricsHTTPHandler serves /metrics alone, behind the Host/Origin check and
// auth of /mcp: for `serve --metrics ADDR`, next to a stdio hub.
func (g *Gateway) MetricsHTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", g.guard(g.MetricsHandler()))
	return mux
}

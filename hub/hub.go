package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/safe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Options tune a Hub beyond its Config.
type Options struct {
	Logger *slog.Logger
	// StartupWait bounds how long New waits for upstreams before serving,
	// and Apply for the servers it starts (default 5s). Slower servers
	// join later and sessions get list_changed.
	StartupWait time.Duration
	// Builtin makes the in-process servers of builtin: entries: package
	// builtin's (builtin.Maker, as cmd/mcp-hub wires them), or a test's
	// fixture servers. The hub does not import package builtin itself, so
	// nil is no builtins: such an entry fails to connect, and says so.
	Builtin func(name string, env map[string]string) (*mcp.Server, error)
	// OAuth is how upstreams that ask for OAuth get their tokens (no
	// store: OAuth is off).
	OAuth upstream.OAuthOptions
	// StateDir is where the hub keeps what it computes once and reuses
	// across restarts (the tools' embedding vectors); empty: the user's
	// state directory.
	StateDir string
	// Redactor, if set, is the caller's (its log's): the hub adds the
	// config's secrets and the OAuth tokens it learns to it.
	Redactor *redact.Redactor
	// HTTPTransport sends requests to remote upstreams (default
	// http.DefaultTransport); each server's requests are scoped to its
	// configured origin on top of it.
	HTTPTransport http.RoundTripper
	// MaxNameLength, if set, bounds exposed names instead of the config's
	// max_name_length, across reloads too (serve --max-name-length: a
	// client's limit belongs to how that client runs the hub, not to a
	// config file several clients share).
	MaxNameLength int
	// Hooks follow sessions and catalogs (hooks.go): the gateway's way in.
	Hooks Hooks
	// Pins is the pin store tool definitions are checked against
	// (pins.go) while the config's pinning is on. Nil: package pin's
	// store in StateDir (or the user's state folder; in memory when there
	// is none).
	Pins Pins
}

// Hub is a running aggregation of upstream servers: the upstream
// connections, the current Catalog, and the downstream sessions.
type Hub struct {
	log    *slog.Logger
	sdkLog *slog.Logger // quieter: the SDK logs every session at info
	// nameLimit is Options.MaxNameLength (0: the config's).
	nameLimit int
	// live is the config and the upstreams it names; Apply swaps it
	// (reload.go). Read it once per use: h.live.Load().
	live   atomic.Pointer[live]
	redact *redact.Redactor // secrets out of errors sent to clients; a reload adds its config's
	reload reloadState

	catalog  atomic.Pointer[Catalog]
	rebuild  sync.Mutex // serialises catalog rebuilds
	lastSeen map[string]listSignature

	closeOnce sync.Once

	mu       sync.Mutex
	sessions map[*Session]struct{}
	nextID   int64

	routes router
	subs   subscriptions
	// suspended are modern calls waiting for client input
	// (inputrequired.go).
	suspended suspensions

	hooks Hooks
	// stateDir holds the embedding cache; semantic embeds tools and
	// queries for hybrid search (semantic.go), nil without
	// discovery.embeddings.
	stateDir string
	semantic atomic.Pointer[semantic]
	// pins hold back changed tool definitions (pins.go); pinStop ends
	// their watch.
	pins    Pins
	pinStop chan struct{}

	// serving is set once New returns: from then on a contested name
	// stays with the server clients already call (see buildCatalog).
	serving atomic.Bool
	// started is set when New builds its first catalog; changes counts
	// upstream list changes and built the count the current catalog saw.
	started atomic.Bool
	changes atomic.Int64
	built   int64 // guarded by rebuild
}

// New starts every configured upstream in parallel and waits until each has
// made its first connection attempt or StartupWait passes. A server that
// fails is reported and retried in the background; it never fails New. A
// name collision among the servers connected by then does (*ConfigError).
func New(ctx context.Context, cfg *config.Config, opts Options) (*Hub, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartupWait <= 0 {
		opts.StartupWait = 5 * time.Second
	}
	h := &Hub{
		log:       opts.Logger,
		sdkLog:    quieter(opts.Logger),
		sessions:  map[*Session]struct{}{},
		lastSeen:  map[string]listSignature{},
		nameLimit: opts.MaxNameLength,
		hooks:     opts.Hooks,
	}
	h.routes.init()
	h.subs = subscriptions{hub: h, by: map[subKey]map[*mcp.ServerSession]bool{},
		of: map[*mcp.ServerSession]*clientSubs{}, held: map[string]int{}}
	h.catalog.Store(&Catalog{byName: map[string]*Tool{}, prompts: map[string]*Prompt{}, resources: map[string]string{}})
	h.reload.init(opts)
	h.redact = opts.Redactor
	if h.redact == nil {
		h.redact = redact.New()
	}
	addSecrets(h.redact, cfg)
	l := &live{cfg: cfg, byName: map[string]*upstream.Upstream{}}
	for _, name := range cfg.ServerOrder {
		u := h.newUpstream(cfg, name)
		l.upstreams = append(l.upstreams, u)
		l.byName[name] = u
	}
	h.live.Store(l)
	h.stateDir = opts.StateDir
	h.semantic.Store(newSemantic(cfg, h.stateDir, h.log))
	h.pins = opts.Pins
	if h.pins == nil {
		h.pins = defaultPins(h.stateDir, h.log)
	}
	for _, u := range l.upstreams {
		u.Start(context.WithoutCancel(ctx))
	}
	timer := time.NewTimer(opts.StartupWait)
	defer timer.Stop()
	for _, u := range l.upstreams {
		select {
		case <-u.Attempted():
		case <-timer.C:
			h.log.Warn("serving before every upstream is ready; slow ones join later", "waited", opts.StartupWait)
			goto ready
		case <-ctx.Done():
			h.Close()
			return nil, ctx.Err()
		}
	}
ready:
	h.started.Store(true)
	c := h.rebuildCatalog()
	// A collision present at start-up is a config problem; one that
	// appears later (a server adds a tool, or joins late) is logged and
	// the server that already had the name keeps it.
	if len(c.Collisions) > 0 {
		h.Close()
		return nil, &config.Error{Path: cfg.Path, Msg: strings.Join(c.Collisions, "\n")}
	}
	if err := h.checkToolsets(c); err != nil {
		h.Close()
		return nil, err
	}
	h.serving.Store(true)
	h.pinStop = make(chan struct{})
	go h.watchPins(h.pinStop)
	return h, nil
}

// quieter passes the SDK's records on only from warn up, unless the hub
// logs at debug.
func quieter(l *slog.Logger) *slog.Logger {
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(a), min: m.min}
}

func (m minLevel) WithGroup(g string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(g), min: m.min}
}

// Config returns the hub's configuration.
func (h *Hub) Config() *config.Config { return h.live.Load().cfg }

// SDKLogger is the logger for the go-sdk's servers and handlers that serve
// the hub: the hub's logger, passing the SDK's records on only from warn up
// unless the hub logs at debug (the SDK logs every session at info).
func (h *Hub) SDKLogger() *slog.Logger { return h.sdkLog }

// Catalog returns the current snapshot.
func (h *Hub) Catalog() *Catalog { return h.catalog.Load() }

// ServerOf names the server of an exposed tool, whatever its prefix.
func (h *Hub) ServerOf(tool string) (server string, ok bool) {
	if t, ok := h.Catalog().Tool(tool); ok {
		return t.Server, true
	}
	return "", false
}

// Upstreams returns the status of every configured server, in config order.
func (h *Hub) Upstreams() []upstream.Status {
	ups := h.live.Load().upstreams
	out := make([]upstream.Status, len(ups))
	for i, u := range ups {
		out[i] = u.Status()
	}
	return out
}

// Close ends every session and upstream connection; stdio servers' processes exit.
// It returns what failed to close (errors.Join), the first time; nil after.
//
// Upstreams go first: a session's close waits for its handlers, and a
// handler waiting on an upstream call (a hung server) only returns once
// that connection ends. Close may be called more than once.
func (h *Hub) Close() error {
	var errs []error
	h.closeOnce.Do(func() {
		// An Apply under way gives up (or finishes swapping) and none
		// starts: the upstreams closed below are all there are.
		h.reload.stop()
		if h.pinStop != nil {
			close(h.pinStop)
		}
		h.reload.apply.Lock()
		defer h.reload.apply.Unlock()
		// An upstream's request waiting for a modern client's input
		// would hold its upstream's close.
		h.suspended.closeAll()
		ups := h.live.Load().upstreams
		upErrs := make([]error, len(ups))
		var wg sync.WaitGroup
		for i, u := range ups {
			wg.Go(func() {
				if err := u.Close(); err != nil {
					upErrs[i] = fmt.Errorf("server '%s': %w", u.Name(), err)
				}
			})
		}
		wg.Wait()
		errs = append(errs, upErrs...)
		h.mu.Lock()
		sessions := make([]*Session, 0, len(h.sessions))
		for s := range h.sessions {
			sessions = append(sessions, s)
		}
		h.mu.Unlock()
		for _, s := range sessions {
			s.close()
		}
		h.semantic.Load().close()
		if ix := h.Catalog().built.Load(); ix != nil {
			if err := ix.Close(); err != nil {
				errs = append(errs, fmt.Errorf("search index: %w", err))
			}
		}
	})
	return errors.Join(errs...)
}

// listener is the hub as its upstreams see it (upstream.Listener): what
// they send on their own comes back to the hub through it.
type listener struct{ h *Hub }

func (l listener) UpstreamChanged(u *upstream.Upstream) { l.h.upstreamChanged(u) }

func (l listener) UpstreamNotified(ctx context.Context, u *upstream.Upstream, method string, params mcp.Params) {
	l.h.upstreamNotified(ctx, u, method, params)
}

func (l listener) UpstreamRequest(ctx context.Context, u *upstream.Upstream, method string, params mcp.Params) (mcp.Result, error) {
	return l.h.upstreamRequest(ctx, u, method, params)
}

// upstreamChanged rebuilds the catalog after an upstream (re)listed, and
// brings every session up to date.
// Before New's own build, upstreams that connect are only recorded: with
// hundreds of servers, a rebuild per connect would make start-up
// quadratic.
func (h *Hub) upstreamChanged(u *upstream.Upstream) {
	h.changes.Add(1)
	if !h.started.Load() || !h.isLive(u) {
		return // New's first build, or Apply's, reads its lists
	}
	h.rebuildCatalog()
	h.notifyListChanges(u)
}

// rebuildCatalog swaps in a new catalog and syncs sessions to it. Changes
// that arrive while a rebuild runs are folded into the next one: a caller
// whose change an already finished rebuild has seen returns at once.
func (h *Hub) rebuildCatalog() *Catalog {
	want := h.changes.Load()
	h.rebuild.Lock()
	defer h.rebuild.Unlock()
	if h.built >= want && want > 0 {
		return h.catalog.Load()
	}
	built := h.built
	h.built = h.changes.Load()
	var prev *Catalog
	if h.serving.Load() {
		prev = h.catalog.Load()
	}
	c := h.buildCatalog(prev)
	if c == nil {
		h.built = built // the next change tries again
		return h.catalog.Load()
	}
	old := h.catalog.Swap(c)
	if f := h.hooks.CatalogSwapped; f != nil {
		f(c)
	}
	h.semantic.Load().attach(c)
	for _, s := range h.sessionList() {
		s.sync(c)
	}
	if old != nil && old != c {
		if ix := old.built.Load(); ix != nil {
			ix.Close() // in-memory: searches still holding it are unaffected
		}
	}
	return c
}

// buildCatalog builds a catalog from the upstreams' lists, or returns nil
// after a panic (logged): what upstreams sent must not take the hub down,
// and the previous catalog stays in service.
func (h *Hub) buildCatalog(prev *Catalog) (c *Catalog) {
	defer safe.Recover(h.log, "catalog rebuild (the previous catalog stays)", func(error) { c = nil })
	l := h.live.Load()
	return buildCatalog(l.cfg, l.upstreams, h.log, prev, cmp.Or(h.nameLimit, l.cfg.NameLimit()), h.pins)
}

// listSignature tells whether an upstream's resources or prompts changed.
type listSignature struct{ resources, prompts string }

func signatureOf(l upstream.Lists) listSignature {
	var sig listSignature
	for _, r := range l.Resources {
		sig.resources += r.URI + "\n"
	}
	for _, t := range l.Templates {
		sig.resources += t.URITemplate + "\n"
	}
	for _, p := range l.Prompts {
		sig.prompts += p.Name + "\n"
	}
	return sig
}

// notifyListChanges sends resources and prompts list_changed downstream
// when an upstream's lists of those changed.
func (h *Hub) notifyListChanges(u *upstream.Upstream) {
	sig := signatureOf(u.Lists())
	h.mu.Lock()
	prev, seen := h.lastSeen[u.Name()]
	h.lastSeen[u.Name()] = sig
	h.mu.Unlock()
	if !seen {
		prev = listSignature{}
	}
	for _, s := range h.sessionList() {
		if !s.reaches(u.Name()) {
			continue // its toolset shows nothing of u's lists
		}
		if sig.resources != prev.resources {
			s.notifyResourcesChanged()
		}
		if sig.prompts != prev.prompts {
			s.notifyPromptsChanged()
		}
	}
}

func (h *Hub) sessionList() []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Session, 0, len(h.sessions))
	for s := range h.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// addSession and removeSession are called with s.mu held: the lock order
// is s.mu, then h.mu.
func (h *Hub) addSession(s *Session) {
	h.mu.Lock()
	h.sessions[s] = struct{}{}
	h.mu.Unlock()
}

func (h *Hub) removeSession(s *Session) {
	h.mu.Lock()
	delete(h.sessions, s)
	h.mu.Unlock()
}

// upstream returns the named upstream.
func (h *Hub) upstream(name string) (*upstream.Upstream, error) {
	u, ok := h.live.Load().byName[name]
	if !ok {
		return nil, fmt.Errorf("no server '%s'", name)
	}
	return u, nil
}

// readyUpstreams returns the connected upstreams whose capabilities pass has.
func (h *Hub) readyUpstreams(has func(*mcp.ServerCapabilities) bool) []*upstream.Upstream {
	var out []*upstream.Upstream
	for _, u := range h.live.Load().upstreams {
		if _, err := u.Session(); err != nil {
			continue
		}
		caps := u.Lists().Capabilities
		if caps != nil && has(caps) {
			out = append(out, u)
		}
	}
	return out
}

// checkToolsets validates every configured toolset against the live catalog.
func (h *Hub) checkToolsets(c *Catalog) error {
	cfg := h.Config()
	names := sortedKeys(cfg.Toolsets)
	var errs []string
	for _, n := range names {
		if err := validateToolset(cfg.Toolsets[n], n, h, c); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return &config.Error{Path: cfg.Path, Msg: strings.Join(errs, "\n")}
	}
	return nil
}

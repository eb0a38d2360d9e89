package hub

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Living config: Apply makes a running hub serve another config without a
// restart. The config and the upstreams it names form one value (live),
// swapped atomically; every reader loads it once and works with that
// snapshot. A reload:
//
//  1. diffs the servers by their config (diffServers): added, removed,
//     changed (how to reach the server differs: reconnect), retuned (only
//     how its tools are exposed differs: prefix, defer_loading, tools,
//     description) and unchanged;
//  2. starts an upstream for every added and changed server and waits for
//     its first connect attempt, as New does, so a changed server's tools
//     are gone for no longer than it takes to list them again;
//  3. swaps in the new config and upstreams, gives open sessions their
//     toolset's new definition, and rebuilds the catalog: every session is
//     synced, keeps the loaded tools that still exist, and gets
//     list_changed if what it lists changed (resources and prompts too);
//  4. closes the upstreams of removed and changed servers (a stdio
//     server's process ends).
//
// Unchanged and retuned servers keep their connection and their process;
// their calls in flight go on. Discovery, toolsets, auth tokens, allowed
// origins and max_sessions apply from the next request. What is fixed at
// start (the HTTP server's limits and session timeout, the chat sections)
// is logged as needing a restart (restartNeeded).

// live is what Apply replaces as a whole.
type live struct {
	cfg       *config.Config
	upstreams []*upstream.Upstream // config order
	byName    map[string]*upstream.Upstream
}

// isLive reports whether u serves in the current config: an upstream that
// Apply has started but not yet swapped in, or one it has replaced, does not.
func (h *Hub) isLive(u *upstream.Upstream) bool {
	return h.live.Load().byName[u.Name()] == u
}

// newUpstream makes (but does not start) the upstream of a configured server.
func (h *Hub) newUpstream(cfg *config.Config, name string) *upstream.Upstream {
	o := h.reload.opts
	return upstream.New(cfg.Servers[name].Upstream, listener{h}, upstream.Options{
		InitialBackoff: time.Duration(cfg.Restart.InitialBackoff),
		MaxBackoff:     time.Duration(cfg.Restart.MaxBackoff),
		UnhealthyAfter: cfg.Restart.UnhealthyAfter,
		Cooldown:       time.Duration(cfg.Restart.Cooldown),
		Secrets:        cfg.Secrets,
		Logger:         o.Logger,
		SDKLogger:      h.sdkLog,
		Builtin:        o.Builtin,
		OAuth:          o.OAuth,
		Redactor:       h.redact,
		MaxResultBytes: cfg.ResultLimit(),
		HTTPTransport:  o.HTTPTransport,
		Sandbox:        h.sandboxFor(cfg),
	})
}

// reloadState serialises Apply and records how reloads went.
type reloadState struct {
	apply sync.Mutex // one Apply at a time
	opts  Options    // New's, for the upstreams Apply starts
	done  chan struct{}
	stop  func() // closes done, once: the hub is closing

	mu        sync.Mutex
	appliedAt time.Time
	reloads   int
	lastErr   string
	lastErrAt time.Time
}

func (r *reloadState) init(opts Options) {
	r.opts = opts
	r.done = make(chan struct{})
	r.stop = sync.OnceFunc(func() { close(r.done) })
	r.appliedAt = time.Now()
}

// ConfigStatus says which config the hub serves and how its reloads went:
// `mcp-hub servers` and /healthz show it.
type ConfigStatus struct {
	Path      string    `json:"path"`
	AppliedAt time.Time `json:"applied_at"` // start-up, or the last successful Apply
	Reloads   int       `json:"reloads"`    // successful Applies since start-up
	// LastReloadError is why the last reload was refused (the running
	// config stayed); empty once a later one succeeds.
	LastReloadError   string    `json:"last_reload_error,omitempty"`
	LastReloadErrorAt time.Time `json:"last_reload_error_at,omitzero"`
}

// maxReloadError bounds LastReloadError (one problem per line).
const maxReloadError = 8 << 10

// ConfigStatus reports the config in service and the last reload's outcome.
func (h *Hub) ConfigStatus() ConfigStatus {
	r := &h.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	return ConfigStatus{Path: h.Config().Path, AppliedAt: r.appliedAt, Reloads: r.reloads,
		LastReloadError: clean.Text(r.lastErr, maxReloadError), LastReloadErrorAt: r.lastErrAt}
}

// ReloadFailed records a config that was not applied (it did not parse or
// validate): ConfigStatus shows err until a reload succeeds. The caller
// logs it.
func (h *Hub) ReloadFailed(err error) {
	r := &h.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr, r.lastErrAt = h.redact.String(err.Error()), time.Now()
}

// serverDiff is what a reload does to each server, by name, in config order.
type serverDiff struct {
	Added     []string // start
	Removed   []string // stop
	Changed   []string // how to reach it differs: reconnect
	Retuned   []string // only how its tools are exposed differs: re-expose, stay connected
	Unchanged []string // untouched
}

// diffServers compares two configs server by server.
func diffServers(old, next *config.Config) serverDiff {
	var d serverDiff
	for _, name := range next.ServerOrder {
		o, ok := old.Servers[name]
		n := next.Servers[name]
		switch {
		case !ok || o == nil:
			d.Added = append(d.Added, name)
		case !reflect.DeepEqual(o.Upstream, n.Upstream):
			d.Changed = append(d.Changed, name)
		case !sameExposure(o, n):
			d.Retuned = append(d.Retuned, name)
		default:
			d.Unchanged = append(d.Unchanged, name)
		}
	}
	for _, name := range old.ServerOrder {
		if _, ok := next.Servers[name]; !ok {
			d.Removed = append(d.Removed, name)
		}
	}
	return d
}

// sameExposure compares what a server entry says beyond how to reach it.
func sameExposure(a, b *config.Server) bool {
	x, y := *a, *b
	x.Upstream, y.Upstream = config.Upstream{}, config.Upstream{}
	return reflect.DeepEqual(x, y)
}

// connects reports whether the diff starts a new upstream for name.
func (d serverDiff) connects(name string) bool {
	return slices.Contains(d.Added, name) || slices.Contains(d.Changed, name)
}

// restartNeeded lists the config keys that changed but take effect only
// when mcp-hub starts again: they shaped the HTTP server or the chat API
// when serve began.
func restartNeeded(old, next *config.Config) []string {
	var keys []string
	if old.MaxRequestBytes != next.MaxRequestBytes {
		keys = append(keys, "max_request_bytes")
	}
	if old.SessionIdleTimeout != next.SessionIdleTimeout {
		keys = append(keys, "session_idle_timeout")
	}
	if old.HTTP != next.HTTP {
		keys = append(keys, "http")
	}
	if old.SessionStore != next.SessionStore {
		keys = append(keys, "session_store")
	}
	if old.HashKey != next.HashKey {
		keys = append(keys, "hash_key")
	}
	if !reflect.DeepEqual(old.Audit, next.Audit) {
		keys = append(keys, "audit")
	}
	if !reflect.DeepEqual(old.Telemetry, next.Telemetry) {
		keys = append(keys, "telemetry")
	}
	if !reflect.DeepEqual(old.Providers, next.Providers) {
		keys = append(keys, "providers")
	}
	if !reflect.DeepEqual(old.Models, next.Models) {
		keys = append(keys, "models")
	}
	if !reflect.DeepEqual(old.Chat, next.Chat) {
		keys = append(keys, "chat")
	}
	return keys
}

// Apply makes the hub serve cfg, a config that has been loaded and
// validated (config.Load, config.Parse): see the top of this file. Only a
// cancelled ctx or a closing hub stops it (the running config stays);
// problems the new config shows once its servers are connected (a toolset
// naming a tool a server does not have, a tool name collision) are logged
// and recorded in ConfigStatus, as at start-up they would be fatal.
func (h *Hub) Apply(ctx context.Context, cfg *config.Config) error {
	r := &h.reload
	r.apply.Lock()
	defer r.apply.Unlock()
	select {
	case <-r.done:
		return errors.New("the hub is closing")
	default:
	}
	old := h.live.Load()
	d := diffServers(old.cfg, cfg)
	next := &live{cfg: cfg, byName: make(map[string]*upstream.Upstream, len(cfg.ServerOrder))}
	var started []*upstream.Upstream
	for _, name := range cfg.ServerOrder {
		u := old.byName[name]
		if d.connects(name) {
			u = h.newUpstream(cfg, name)
			u.Start(context.WithoutCancel(ctx))
			started = append(started, u)
		}
		next.upstreams = append(next.upstreams, u)
		next.byName[name] = u
	}
	if err := h.awaitFirstAttempts(ctx, started); err != nil {
		closeAll(started)
		return err
	}

	addSecrets(h.redact, cfg)
	h.live.Store(next)
	h.retoolSessions(cfg)
	if s := h.semantic.Load(); !s.same(cfg) {
		h.semantic.Store(newSemantic(cfg, h.stateDir, h.log))
		s.close()
	}
	h.changes.Add(1)
	c := h.rebuildCatalog()
	for _, u := range started {
		h.notifyListChanges(u)
	}

	var problems []string
	if err := h.checkToolsets(c); err != nil {
		h.log.Error("config applied, but a toolset does not match the servers' tools", "err", err)
		problems = append(problems, err.Error())
	}
	if keys := restartNeeded(old.cfg, cfg); len(keys) > 0 {
		h.log.Warn("config changed where it cannot apply live; restart mcp-hub to apply it", "keys", strings.Join(keys, ", "))
	}
	if old.cfg.Restart != cfg.Restart || old.cfg.ResultLimit() != cfg.ResultLimit() {
		h.log.Info("restart and max_result_bytes apply to servers started from now on (added or changed); restart mcp-hub to apply them to all")
	}
	h.log.Info("config applied", "path", cfg.Path, "added", d.Added, "removed", d.Removed, "changed", d.Changed,
		"retuned", d.Retuned, "unchanged", len(d.Unchanged))

	r.mu.Lock()
	r.appliedAt, r.lastErr, r.lastErrAt = time.Now(), "", time.Time{}
	if len(problems) > 0 {
		r.lastErr, r.lastErrAt = h.redact.String(strings.Join(problems, "\n")), r.appliedAt
	}
	r.reloads++
	r.mu.Unlock()

	// The new config is in service: what it dropped goes now.
	var stopped []*upstream.Upstream
	for _, name := range append(slices.Clone(d.Removed), d.Changed...) {
		stopped = append(stopped, old.byName[name])
	}
	closeAll(stopped)
	for _, name := range d.Removed {
		h.forgetLists(name)
	}
	return nil
}

// awaitFirstAttempts waits, as New does, until each upstream has tried to
// connect once or the start-up wait passes; slower ones join later.
func (h *Hub) awaitFirstAttempts(ctx context.Context, ups []*upstream.Upstream) error {
	wait := h.reload.opts.StartupWait
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for _, u := range ups {
		select {
		case <-u.Attempted():
		case <-timer.C:
			h.log.Warn("applying the config before every new server is ready; slow ones join later", "waited", wait)
			return nil
		case <-ctx.Done():
			return fmt.Errorf("config not applied: %w", ctx.Err())
		case <-h.reload.done:
			return errors.New("config not applied: the hub is closing")
		}
	}
	return nil
}

// closeAll closes upstreams in parallel: each waits for its process to end.
func closeAll(ups []*upstream.Upstream) {
	var wg sync.WaitGroup
	for _, u := range ups {
		wg.Go(func() { u.Close() })
	}
	wg.Wait()
}

// retoolSessions gives each open session the new definition of its
// toolset. A session whose toolset is gone from the config keeps the one
// it had (new sessions cannot pick it).
func (h *Hub) retoolSessions(cfg *config.Config) {
	warned := map[string]bool{}
	for _, s := range h.sessionList() {
		if s.toolsetName == "" {
			continue
		}
		ts, ok := cfg.Toolsets[s.toolsetName]
		if !ok || ts == nil {
			if !warned[s.toolsetName] {
				warned[s.toolsetName] = true
				h.log.Warn("toolset removed from the config; its open sessions keep its last definition", "toolset", s.toolsetName)
			}
			continue
		}
		s.toolset.Store(ts)
	}
}

// forgetLists drops a removed server's resources and prompts: sessions
// get list_changed for those it had.
func (h *Hub) forgetLists(name string) {
	h.mu.Lock()
	sig, seen := h.lastSeen[name]
	delete(h.lastSeen, name)
	h.mu.Unlock()
	if !seen {
		return
	}
	for _, s := range h.sessionList() {
		if !s.reaches(name) {
			continue // its toolset showed nothing of the server's lists
		}
		if sig.resources != "" {
			s.notifyResourcesChanged()
		}
		if sig.prompts != "" {
			s.notifyPromptsChanged()
		}
	}
}

// addSecrets has r redact cfg's secrets: ${VAR} values, servers'
// credentials, auth tokens. A Redactor keeps every secret it was given: a
// message from before a reload may still carry an old one.
func addSecrets(r *redact.Redactor, cfg *config.Config) {
	r.Add(cfg.Secrets...)
	r.Add(cfg.Auth.TokenValues()...)
	if e := cfg.Discovery.Embeddings; e != nil {
		r.Add(e.APIKey)
	}
	for _, name := range cfg.ServerOrder {
		r.Add(cfg.Servers[name].SecretValues()...)
	}
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub"

	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// Sessions that survive any replica.
//
// With session_store set, every HTTP session is written to the store when
// its initialize succeeds (before the client has the answer) and again
// whenever it loads tools (before search_tools answers). Each request for
// it restarts its time to live there, session_idle_timeout; DELETE removes
// it; a session nobody uses expires.
//
// A replica that gets a request for a session id it does not hold reads
// the record and rebuilds the session: a new hub.Session with the record's
// id, toolset, principal and loaded tools (hub.SessionOptions), whose
// server hands out the stored id, primed with a synthesized initialize, carrying
// the client's stored params, and notifications/initialized, both served
// by the SDK's own handler. Then the client's request is served as if the
// session had always been here.
//
// The store is never in a client's way: when it cannot be reached, its
// operations are skipped, /healthz says degraded, sessions live in this
// replica's memory, and a monitor pings it until it answers, then writes
// every session held here back.

// Store timings: how long one store operation may take (StoreTimeout; a
// store's own network timeouts should not exceed it), and how often the
// monitor pings it while it is down (and while it is up, to notice).
const (
	StoreTimeout    = time.Second
	storeRetryEvery = 500 * time.Millisecond
	storeCheckEvery = 5 * time.Second
)

// sessionStoreLink ties the hub's HTTP sessions to a SessionStore. The
// zero value (no store) does nothing.
type sessionStoreLink struct {
	g     *Gateway
	store SessionStore // nil: session_store is not set
	ttl   time.Duration
	up    atomic.Bool
	stop  chan struct{}
	done  chan struct{}
	kick  chan struct{} // wakes the monitor when an operation failed

	mu        sync.Mutex
	held      map[string]*heldSession  // sessions this replica holds, by id
	restoring map[string]chan struct{} // restores in progress, by id
}

// heldSession is a session this replica holds, with who opened it.
type heldSession struct {
	s         *hub.Session
	toolset   string
	principal string
}

// errStoreDown is what an operation returns while the store is down.
var errStoreDown = errors.New("session store unreachable")

// startSessionStore connects to session_store, if set. A store that does
// not answer is a loud warning and the hub runs degraded, never an error:
// only a URL that cannot be parsed is.
func (g *Gateway) startSessionStore(store SessionStore, cfg *config.Config) {
	l := &g.storeLink
	l.g = g
	if store == nil {
		return
	}
	l.store, l.ttl = store, cfg.SessionTimeout()
	l.held, l.restoring = map[string]*heldSession{}, map[string]chan struct{}{}
	l.stop, l.done, l.kick = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	err := store.Ping(ctx)
	cancel()
	if err == nil {
		l.up.Store(true)
		g.log.Info("session store connected: sessions survive any replica")
		g.dropLegacyKey(store)
	} else {
		l.warnDown(err)
	}
	go l.monitor()
}

// dropLegacyKey removes the hash key an earlier version kept in the
// store (the store never holds a key: hash_key is required with it), so
// that whoever reads the store cannot test guesses against the hashes
// made with it. While the store is away it stays until the next start.
func (g *Gateway) dropLegacyKey(store SessionStore) {
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	switch dropped, err := store.DropLegacyKey(ctx); {
	case err != nil:
		g.log.Warn("the session store may still hold the hash key an earlier version kept there (mcp-hub:hash_key); delete it", "err", g.redact.String(err.Error()))
	case dropped:
		g.log.Warn("removed the hash key an earlier version kept in the session store (mcp-hub:hash_key): hashes made with it (audit args_hmac of that time) can no longer be checked from the store")
	}
}

func (l *sessionStoreLink) enabled() bool { return l.store != nil }

func (l *sessionStoreLink) warnDown(err error) {
	l.g.log.Error("session store unreachable: sessions are kept in this replica's memory only, and are written back when it returns; /healthz says degraded",
		"err", l.g.redact.String(err.Error()))
}

// state is the store's line in /healthz: "" without a store.
func (l *sessionStoreLink) state() string {
	switch {
	case !l.enabled():
		return ""
	case l.up.Load():
		return "ok"
	default:
		return "unreachable"
	}
}

// monitor notices the store going away (a failed operation, or a ping)
// and coming back, and then writes back every session held here.
func (l *sessionStoreLink) monitor() {
	defer close(l.done)
	defer safe.Recover(l.g.log, "session store monitor", nil)
	for {
		every := storeCheckEvery
		if !l.up.Load() {
			every = storeRetryEvery
		}
		t := time.NewTimer(every)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-l.kick:
			t.Stop()
			continue
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
		err := l.store.Ping(ctx)
		cancel()
		switch {
		case err != nil && l.up.Load():
			l.failed(err)
		case err == nil && !l.up.Load():
			l.up.Store(true)
			n, err := l.writeBack()
			if err != nil {
				l.failed(err)
				continue
			}
			l.g.log.Warn("session store reachable again: sessions written back", "sessions", n)
		}
	}
}

// failed marks the store down after an operation failed.
func (l *sessionStoreLink) failed(err error) {
	if l.up.CompareAndSwap(true, false) {
		l.warnDown(err)
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// do runs one store operation, bounded, unless the store is down.
func (l *sessionStoreLink) do(f func(ctx context.Context) error) error {
	if !l.up.Load() {
		return errStoreDown
	}
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		if !errors.Is(err, ErrNotOwner) { // an answer, not an outage
			l.failed(err)
		}
		return err
	}
	return nil
}

func (l *sessionStoreLink) close() error {
	if !l.enabled() {
		return nil
	}
	close(l.stop)
	<-l.done
	if err := l.store.Close(); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

// writeBack saves every session held here, as it is now.
func (l *sessionStoreLink) writeBack() (int, error) {
	l.mu.Lock()
	held := make([]*heldSession, 0, len(l.held))
	for _, hs := range l.held {
		held = append(held, hs)
	}
	l.mu.Unlock()
	for _, hs := range held {
		// A record of another principal under the same id stays theirs.
		if err := l.save(hs); err != nil && !errors.Is(err, ErrNotOwner) {
			return 0, err
		}
	}
	return len(held), nil
}

// record is what the store keeps of a session held here; nil before its
// initialize has succeeded.
func (hs *heldSession) record(ss *mcp.ServerSession) *SessionRecord {
	params := ss.InitializeParams()
	if params == nil {
		return nil
	}
	init, err := json.Marshal(params)
	if err != nil {
		return nil
	}
	return &SessionRecord{ID: ss.ID(), Toolset: hs.toolset, Principal: hs.principal, Init: init, Loaded: hs.s.LoadedTools()}
}

func (l *sessionStoreLink) save(hs *heldSession) error {
	for ss := range hs.s.Server().Sessions() {
		rec := hs.record(ss)
		if rec == nil {
			return nil
		}
		return l.do(func(ctx context.Context) error { return l.store.Save(ctx, rec, l.ttl) })
	}
	return nil
}

// persist is the hub's SessionOptions.Persist for a new HTTP session of
// toolset opened by principal: the outermost layer of the session's
// receiving chain (hub's Session.receiving), which makes it one that the
// store keeps. It is saved once its initialize succeeds, before the
// client gets the answer, so that its next request may go to any replica.
// nil without a store.
func (l *sessionStoreLink) persist(toolset, principal string) func(*hub.Session) mcp.Middleware {
	if !l.enabled() {
		return nil
	}
	return func(s *hub.Session) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method != "initialize" || err != nil {
					return res, err
				}
				ss, ok := req.GetSession().(*mcp.ServerSession)
				if !ok {
					return res, err
				}
				hs := &heldSession{s: s, toolset: toolset, principal: principal}
				l.mu.Lock()
				l.held[ss.ID()] = hs
				l.mu.Unlock()
				// The SDK sets the session's initialize params only after
				// this handler returns: save them as the client sent them.
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok {
					if init, jerr := json.Marshal(p); jerr == nil {
						rec := &SessionRecord{ID: ss.ID(), Toolset: toolset, Principal: principal, Init: init, Loaded: s.LoadedTools()}
						l.do(func(ctx context.Context) error { return l.store.Save(ctx, rec, l.ttl) })
					}
				}
				return res, err
			}
		}
	}
}

// saveLoaded writes s's loaded set to the store, before the call that
// loaded tools answers. A session not held here (stdio, in-memory) or a
// store that is down: nothing to do (the monitor writes it back).
func (l *sessionStoreLink) saveLoaded(s *hub.Session) {
	if !l.enabled() {
		return
	}
	ss := s.ServerSession()
	if ss == nil {
		return
	}
	l.mu.Lock()
	hs := l.held[ss.ID()]
	l.mu.Unlock()
	if hs != nil && hs.s == s {
		l.save(hs)
	}
}

// forget drops a session that ended here. Its record stays: the client may
// go on on another replica, and the record expires by itself.
func (l *sessionStoreLink) forget(id string) {
	if !l.enabled() {
		return
	}
	l.mu.Lock()
	delete(l.held, id)
	l.mu.Unlock()
}

func (l *sessionStoreLink) holds(id string) *heldSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[id]
}

// principal names who sends r, for a session's record: the ID of its
// principal (admit), the same on every replica and never a secret; "" when
// no auth is configured.
func principalID(r *http.Request) string {
	if p := hub.PrincipalFrom(r.Context()); p != nil {
		return p.ID
	}
	return ""
}

// prepareSession runs before the SDK sees a request that names session id.
// It keeps the store in step (a sliding time to live; DELETE removes the
// record) and restores a session that another replica made. It returns
// false when it has answered the request itself.
//
// Nothing changes for a request of another principal than the session's
// owner: it gets the 404 of a session that does not exist, on every
// replica, so it learns nothing of the session either.
func (g *Gateway) prepareSession(w http.ResponseWriter, r *http.Request, id string, stream http.Handler) bool {
	l := &g.storeLink
	if !l.enabled() {
		return true
	}
	principal := principalID(r)
	hs := l.holds(id)
	if hs != nil && hs.principal != principal {
		g.log.Warn("session requested by another principal than its owner: refused", "session_toolset", hs.toolset)
		sessionNotFound(w)
		return false
	}
	if r.Method == http.MethodDelete {
		var deleted bool
		l.do(func(ctx context.Context) (err error) { deleted, err = l.store.Delete(ctx, id, principal); return err })
		if hs == nil && deleted {
			w.WriteHeader(http.StatusNoContent)
			return false
		}
		return true
	}
	if hs != nil {
		var loaded []string
		var found bool
		if l.do(func(ctx context.Context) (err error) { loaded, found, err = l.store.Touch(ctx, id, l.ttl); return err }) != nil {
			return true
		}
		if !found {
			// Written while the store was down, or expired there while
			// this replica kept it: write it back.
			l.save(hs)
			return true
		}
		// Tools another replica loaded for this session since.
		hs.s.LoadTools(loaded)
		return true
	}
	return g.restore(w, r, id, stream)
}

// restore rebuilds session id from the store, once per replica however
// many requests for it arrive at once. When there is no record (or it
// belongs to someone else) the SDK answers 404 as usual.
func (g *Gateway) restore(w http.ResponseWriter, r *http.Request, id string, stream http.Handler) bool {
	l := &g.storeLink
	l.mu.Lock()
	if wait, ok := l.restoring[id]; ok {
		l.mu.Unlock()
		select {
		case <-wait:
		case <-r.Context().Done():
		}
		if hs := l.holds(id); hs != nil && hs.principal != principalID(r) {
			sessionNotFound(w)
			return false
		}
		return true
	}
	wait := make(chan struct{})
	l.restoring[id] = wait
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.restoring, id)
		l.mu.Unlock()
		close(wait)
	}()

	var rec *SessionRecord
	if err := l.do(func(ctx context.Context) (err error) { rec, err = l.store.Load(ctx, id); return err }); err != nil || rec == nil {
		if err != nil && !errors.Is(err, errStoreDown) {
			g.log.Warn("session cannot be restored from the store", "err", g.redact.String(err.Error()))
		}
		return true
	}
	principal := principalID(r)
	if rec.Principal != principal { // the SDK's 404 follows: as if there were none
		g.log.Warn("stored session requested by another principal: refused", "session_toolset", rec.Toolset)
		return true
	}
	// A notifications/initialized from the client itself is the one to
	// complete the restored handshake: a synthesized one would make it a
	// duplicate.
	var clientInitialized bool
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.Config().RequestLimit()))
		if err != nil {
			http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		clientInitialized = isInitializedNotification(body)
	}
	if !g.takeSessionSlot() {
		g.refuseSession(w)
		return false
	}
	s, err := g.restoredSession(r, rec, principal, clientInitialized, stream)
	if err != nil {
		g.slots.release()
		g.log.Warn("session cannot be restored from the store", "toolset", rec.Toolset, "err", g.redact.String(err.Error()))
		return true
	}
	g.holdSlot(s)
	g.log.Info("session restored from the store", "toolset", rec.Toolset, "loaded", len(rec.Loaded))
	return true
}

// restoredSession builds the session for rec and primes it through the
// SDK's handler: the initialize the client sent at first, and (unless the
// client's own is on its way) notifications/initialized.
func (g *Gateway) restoredSession(r *http.Request, rec *SessionRecord, principal string, clientInitialized bool, stream http.Handler) (s *hub.Session, err error) {
	defer safe.Recover(g.log, "restoring a session", func(p error) { s, err = nil, p })
	p := hub.PrincipalFrom(r.Context())
	if p == nil {
		p = anonymous
	}
	// The session carries on with its stored id and loaded tools (no
	// client is connected yet: no list_changed).
	s, err = g.hub.NewSession(hub.SessionOptions{Toolset: rec.Toolset, Principal: p, ID: rec.ID, Loaded: rec.Loaded,
		Persist: g.storeLink.persist(rec.Toolset, principal)})
	if err != nil {
		return nil, err
	}

	initBody, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": rec.Init})
	if err != nil {
		return nil, err
	}
	ctx := context.WithValue(r.Context(), sessionKey{}, s)
	if code := primeRequest(ctx, r, stream, initBody, ""); code != http.StatusOK {
		return nil, fmt.Errorf("the replayed initialize got HTTP %d", code)
	}
	var ss *mcp.ServerSession
	for x := range s.Server().Sessions() {
		ss = x
	}
	if ss == nil || ss.ID() != rec.ID || ss.InitializeParams() == nil {
		if ss != nil {
			ss.Close()
		}
		return nil, errors.New("the replayed initialize did not make the session")
	}
	if !clientInitialized {
		body := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if code := primeRequest(ctx, r, stream, body, rec.ID); code != http.StatusAccepted {
			ss.Close()
			return nil, fmt.Errorf("the replayed notifications/initialized got HTTP %d", code)
		}
	}
	return s, nil
}

// primeRequest serves one synthesized POST through the SDK's handler and
// returns its status. It carries r's Host and context (the SDK checks the
// Host against the listener), not its headers.
func primeRequest(ctx context.Context, r *http.Request, stream http.Handler, body []byte, sessionID string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL.String(), bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Host = r.Host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	rec := httptest.NewRecorder()
	stream.ServeHTTP(rec, req)
	return rec.Code
}

// sessionNotFound answers as the SDK does for a session id it does not know.
func sessionNotFound(w http.ResponseWriter) {
	http.Error(w, "session not found", http.StatusNotFound)
}

// isInitializedNotification reports whether body is the client's
// notifications/initialized.
func isInitializedNotification(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "notifications/initialized"
}

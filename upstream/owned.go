package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// Owned sessions. An HTTP upstream gets a session of its own for each
// downstream session that calls it, as a session there is only a header
// away. What the server sends in it (sampling, elicitation, roots
// requests, log messages) then belongs to exactly one downstream session,
// with nothing to guess, and logging/setLevel applies to that session
// alone. A stdio server is one process shared by every client: what it
// sends is routed by the calls in flight (the hub's router), and refused
// when that is ambiguous; unless its `isolation` gives each principal or
// client session a process of its own, an owned session too (isolated.go).
//
// The shared session still lists tools, resources and prompts, watches
// list changes and serves everything but tool calls. A server of the
// stateless revision has no sessions to own: its calls all go through the
// shared connection (CallTool), and what it asks for during a call comes
// back in the call's result, answered for the caller (stateless.go).

// ownerKey marks the context of what an owned session's server sends.
type ownerKey struct{}

// Owner returns the downstream session a Listener call belongs to: the
// owner of the upstream session it comes from, or the session whose
// request a stateless server asked for input (stateless.go). It is nil
// for what comes from the shared session on its own.
func Owner(ctx context.Context) any { return ctx.Value(ownerKey{}) }

// ownedSession is one downstream session's connection to the server. It
// counts its own notifications: the ordering fix (notificationCounter)
// holds per connection, not across them.
type ownedSession struct {
	ready   chan struct{} // closed once connecting has ended
	cs      *mcp.ClientSession
	err     error
	failed  time.Time // when connecting failed
	counter notificationCounter
	tap     wireTap

	// An isolated stdio process (isolated.go) also has:
	raw  *stdioConn // its connection, for raw calls
	key  any        // its owner, the key it has in Upstream.owned
	busy int        // requests using it; guarded by Upstream.mu
	used time.Time  // when the last one ended; guarded by Upstream.mu
	idle *time.Timer
}

// close ends the session (an isolated process: stops it) once connecting
// has ended.
func (o *ownedSession) close() {
	<-o.ready
	if o.cs != nil {
		o.cs.Close()
	}
}

// retryOwnedAfter is how long a client whose own session could not be
// opened uses the shared one before the next try.
const retryOwnedAfter = 30 * time.Second

// ownsSessions reports whether calls get a session per downstream session.
func (u *Upstream) ownsSessions() bool {
	k := u.cfg.Kind()
	return k == config.TransportStreamable || k == config.TransportSSE
}

// sessionOf returns owner's own session, connecting it on first use. If
// that fails, the error stays for retryOwnedAfter: the caller uses the
// shared session meanwhile.
func (u *Upstream) sessionOf(ctx context.Context, owner any) (*ownedSession, error) {
	u.mu.Lock()
	o := u.owned[owner]
	if o != nil {
		select {
		case <-o.ready:
			if o.err != nil && time.Since(o.failed) > retryOwnedAfter {
				o = nil // try again
			}
		default: // connecting
		}
	}
	if o != nil {
		u.mu.Unlock()
		select {
		case <-o.ready:
			return o, o.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if u.state == StateClosed {
		u.mu.Unlock()
		return nil, errors.New("the hub is shutting down")
	}
	if u.owned == nil {
		u.owned = map[any]*ownedSession{}
	}
	o = &ownedSession{ready: make(chan struct{})}
	o.counter.init()
	o.tap = wireTap{counter: &o.counter, schemas: &rawSchemas{}}
	u.owned[owner] = o
	u.mu.Unlock()

	o.cs, o.err = u.connectOwned(owner, o)
	if o.err != nil {
		// Kept, so that this client's calls go to the shared session for
		// a while rather than each trying again.
		o.failed = time.Now()
		u.log.Warn("cannot open a session for a client; its calls share the hub's session for now", "err", o.err, "retry_in", retryOwnedAfter)
	}
	u.mu.Lock()
	if u.owned[owner] != o && o.err == nil {
		o.cs.Close()
		o.cs, o.err = nil, errors.New("the client session ended")
	}
	u.mu.Unlock()
	close(o.ready)
	if o.err != nil {
		return nil, o.err
	}
	go func() {
		o.cs.Wait()
		u.forgetOwned(owner, o)
	}()
	return o, nil
}

// connectOwned opens o's session for owner, at the log level owner chose.
func (u *Upstream) connectOwned(owner any, o *ownedSession) (*mcp.ClientSession, error) {
	u.mu.Lock()
	life := u.life
	u.mu.Unlock()
	if life == nil {
		life = context.Background()
	}
	ctx, cancel := context.WithTimeout(life, u.cfg.CallTimeout())
	defer cancel()
	transport, err := u.transport(life, &o.tap, nil)
	if err != nil {
		return nil, u.redact.Error(err)
	}
	cs, err := u.newClient(owner, &o.counter).Connect(ctx, transport, u.sessionOptions())
	if err != nil {
		return nil, u.redact.Error(fmt.Errorf("connect a session for a client: %w", err))
	}
	if st, ok := transport.(*stdioTransport); ok {
		o.raw = st.conn // an isolated process takes raw calls, as the shared one
	}
	u.mu.Lock()
	level := u.levels[owner]
	u.mu.Unlock()
	// A stateless server has no setLevel: each call carries the level.
	if level != "" && !stateless(cs) {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			u.log.Warn("logging/setLevel not forwarded", "err", u.redact.Error(err))
		}
	}
	return cs, nil
}

// forgetOwned drops o if it is still owner's session, and closes it.
func (u *Upstream) forgetOwned(owner any, o *ownedSession) {
	u.mu.Lock()
	if u.owned[owner] == o {
		delete(u.owned, owner)
	}
	u.mu.Unlock()
	if o.cs != nil {
		o.cs.Close()
	}
}

// Forget closes owner's own session: the downstream session has ended.
func (u *Upstream) Forget(owner any) {
	u.mu.Lock()
	o := u.owned[owner]
	delete(u.owned, owner)
	delete(u.levels, owner)
	u.mu.Unlock()
	if o != nil {
		go func() {
			<-o.ready
			if o.cs != nil {
				o.cs.Close()
			}
		}()
	}
}

// SetLoggingLevel sets owner's log level: on its own session or isolated
// process (now, or when one is opened) and on the shared session, whose
// messages the Listener attributes to the calls in flight. A stateless
// server has no logging/setLevel: the level is remembered, and each of
// owner's calls asks for it in its _meta (prepareCall).
func (u *Upstream) SetLoggingLevel(ctx context.Context, owner any, p *mcp.SetLoggingLevelParams) error {
	var own *mcp.ClientSession
	key := owner
	if u.isolated() {
		// The owner's process: a principal's is set by whichever of its
		// sessions set a level last. (Asked before u.mu: the owner may
		// take a lock of its own.)
		key = u.isolationKey(owner)
	}
	u.mu.Lock()
	u.level = p.Level
	for _, k := range []any{owner, key} {
		if k == nil {
			continue
		}
		if u.levels == nil {
			u.levels = map[any]mcp.LoggingLevel{}
		}
		u.levels[k] = p.Level
	}
	if key != nil && (u.ownsSessions() || u.isolated()) {
		if o := u.owned[key]; o != nil {
			select {
			case <-o.ready:
				own = o.cs
			default: // connecting: set it once connected
				go func() {
					<-o.ready
					if o.cs != nil && !stateless(o.cs) {
						o.cs.SetLoggingLevel(context.WithoutCancel(ctx), p)
					}
				}()
			}
		}
	}
	shared := u.session
	u.mu.Unlock()
	var errs []error
	for _, cs := range []*mcp.ClientSession{own, shared} {
		if cs != nil && !stateless(cs) {
			errs = append(errs, cs.SetLoggingLevel(ctx, p))
		}
	}
	return u.redact.Error(errors.Join(errs...))
}

// closeOwned closes every owned session, when the upstream closes.
func (u *Upstream) closeOwned() {
	u.mu.Lock()
	owned := u.owned
	u.owned = nil
	u.mu.Unlock()
	for _, o := range owned {
		<-o.ready
		if o.cs != nil {
			o.cs.Close()
		}
	}
}

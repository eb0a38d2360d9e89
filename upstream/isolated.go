package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
)

// Isolated processes. A stdio server with `isolation: principal` or
// `isolation: session` runs one process of its own for each owner: each
// principal, or each client session. They are owned sessions (owned.go)
// whose connection is a process: what one sends (sampling, elicitation,
// roots, logs) is handed to the Listener with its owner in the context
// (Owner), so it reaches only that owner's sessions.
//
// The shared process still runs: it lists tools, resources and prompts
// for the catalog, watches list changes, and serves completions and
// subscriptions, which cause nothing to be sent to a client. Tool calls,
// prompts/get and resources/read go to the caller's own process. The cost
// is one process more than the owners calling; the gain is that the
// catalog never waits for a process to start, and never depends on who
// happened to call first.
//
// An owner's process starts on its first request, in that request, and
// stops when it has served no request for the server's idle timeout
// (isolation_idle_timeout), when its session ends (`session`), or with
// the hub. At most max_isolated_processes run at once: past it a process
// that serves no request is stopped to make room, and when every one is
// busy the request fails with an *IsolationLimitError.

// PrincipalOwner is the owner of an isolated process shared by every
// session of one principal: the principal's key. Owner returns it for what
// such a process sends; the hub then attributes it among that principal's
// calls alone.
type PrincipalOwner string

// An Isolatable owner (the hub's session) says whose process of an
// isolated server its requests use. A request whose owner is not one is
// refused: it has no process of its own, and the shared one is not its.
type Isolatable interface {
	// IsolationKey is the owner of the process for mode
	// (config.IsolationPrincipal or config.IsolationSession): a PrincipalOwner, or a
	// value that stands for one client session. nil refuses the request.
	IsolationKey(mode string) any
}

// IsolationLimitError is a request refused because every one of the
// server's max_isolated_processes processes is busy.
type IsolationLimitError struct {
	Server string
	Limit  int
}

func (e *IsolationLimitError) Error() string {
	return fmt.Sprintf("server '%s' runs %d isolated processes, its max_isolated_processes, and all are busy: retry when one is free, or raise max_isolated_processes",
		e.Server, e.Limit)
}

// isolated reports whether requests run in their owner's own process.
func (u *Upstream) isolated() bool {
	return u.cfg.IsolationMode() != config.IsolationShared
}

// isolationKey is the owner of the process that serves a request of owner.
func (u *Upstream) isolationKey(owner any) any {
	o, ok := owner.(Isolatable)
	if !ok {
		return nil
	}
	return o.IsolationKey(u.cfg.IsolationMode())
}

// isolatedSession returns the process that serves owner's request, starting
// it if needed, and release, to call when the request is over: it starts
// the process's idle timer once no request uses it.
func (u *Upstream) isolatedSession(ctx context.Context, owner any) (o *ownedSession, release func(), err error) {
	key := u.isolationKey(owner)
	if key == nil {
		return nil, nil, fmt.Errorf("server '%s' has 'isolation: %s' and the request has no client session to run a process for", u.cfg.Name, u.cfg.IsolationMode())
	}
	var evicted *ownedSession
	u.mu.Lock()
	if u.state == StateClosed {
		u.mu.Unlock()
		return nil, nil, &UnavailableError{Server: u.cfg.Name, State: StateClosed, Cause: errors.New("the hub is shutting down")}
	}
	o = u.owned[key]
	start := o == nil
	if start {
		if len(u.owned) >= u.cfg.IsolatedLimit() {
			if evicted = u.idlestLocked(); evicted == nil {
				u.mu.Unlock()
				return nil, nil, &IsolationLimitError{Server: u.cfg.Name, Limit: u.cfg.IsolatedLimit()}
			}
			u.dropOwnedLocked(evicted)
		}
		if u.owned == nil {
			u.owned = map[any]*ownedSession{}
		}
		o = &ownedSession{ready: make(chan struct{}), key: key}
		o.counter.init()
		o.tap = wireTap{counter: &o.counter, schemas: &rawSchemas{}}
		u.owned[key] = o
	}
	o.busy++
	if o.idle != nil {
		o.idle.Stop()
		o.idle = nil
	}
	u.mu.Unlock()
	release = func() { u.releaseIsolated(o) }
	if evicted != nil {
		u.log.Info("stopped an idle isolated process to make room (max_isolated_processes)", "max_isolated_processes", u.cfg.IsolatedLimit())
		go evicted.close()
	}
	if start {
		o.cs, o.err = u.connectOwned(key, o)
		u.mu.Lock()
		if o.err == nil && u.owned[o.key] != o {
			// Its session ended, or the hub closed, while it started.
			o.cs.Close()
			o.cs, o.err = nil, errors.New("its client session ended, or the hub is shutting down")
		}
		u.mu.Unlock()
		if o.err != nil {
			o.err = fmt.Errorf("server '%s': start an isolated process: %w", u.cfg.Name, o.err)
			u.mu.Lock()
			u.dropOwnedLocked(o) // the next request tries again
			u.mu.Unlock()
		} else {
			u.log.Info("isolated process started", "isolation", u.cfg.IsolationMode())
			go func() {
				// A process that exits is forgotten: the next request starts another.
				o.cs.Wait()
				u.forgetOwned(key, o)
			}()
		}
		close(o.ready)
	}
	select {
	case <-o.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if o.err != nil {
		release()
		return nil, nil, o.err
	}
	return o, release, nil
}

// releaseIsolated ends one request's use of o; the last one starts its
// idle timer.
func (u *Upstream) releaseIsolated(o *ownedSession) {
	u.mu.Lock()
	defer u.mu.Unlock()
	o.busy--
	o.used = time.Now()
	if o.busy > 0 || u.owned[o.key] != o {
		return
	}
	o.idle = time.AfterFunc(u.cfg.IsolatedIdleTimeout(), func() {
		u.mu.Lock()
		// A request that came meanwhile holds it: busy says so, whether
		// or not it stopped this timer in time.
		stop := u.owned[o.key] == o && o.busy == 0
		if stop {
			u.dropOwnedLocked(o)
		}
		u.mu.Unlock()
		if stop {
			u.log.Info("isolated process stopped after its idle timeout", "isolation_idle_timeout", u.cfg.IsolatedIdleTimeout())
			o.close()
		}
	})
}

// idlestLocked is the ready process serving no request that has been idle
// longest, or nil.
func (u *Upstream) idlestLocked() *ownedSession {
	var idlest *ownedSession
	for _, o := range u.owned {
		select {
		case <-o.ready:
		default:
			continue // starting: its first request holds it
		}
		if o.busy == 0 && (idlest == nil || o.used.Before(idlest.used)) {
			idlest = o
		}
	}
	return idlest
}

// dropOwnedLocked removes o from the owned sessions, if it is still there.
func (u *Upstream) dropOwnedLocked(o *ownedSession) {
	if u.owned[o.key] == o {
		delete(u.owned, o.key)
	}
	if o.idle != nil {
		o.idle.Stop()
		o.idle = nil
	}
	if _, ok := o.key.(PrincipalOwner); ok {
		// Principals come and go without a session end to forget them
		// by: their level goes with their process, so the map stays
		// bounded by max_isolated_processes.
		delete(u.levels, o.key)
	}
}

// IsolatedProcesses counts the isolated processes running or starting.
func (u *Upstream) IsolatedProcesses() int {
	if !u.isolated() {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.owned)
}

// sessionFor is the session a prompts/get or resources/read of owner goes
// to: owner's own process of an isolated server, else the shared session.
// release ends the request's use of it.
func (u *Upstream) sessionFor(ctx context.Context, owner any) (cs *mcp.ClientSession, release func(), err error) {
	cs, err = u.Session()
	if err != nil || !u.isolated() {
		return cs, func() {}, err
	}
	o, release, err := u.isolatedSession(ctx, owner)
	if err != nil {
		return nil, nil, err
	}
	return o.cs, release, nil
}

package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// ProtocolVersion is the newest revision with the initialize handshake:
// what a server that does not speak StatelessProtocolVersion is asked for.
const ProtocolVersion = "2025-11-25"

// State is where an Upstream is in its life.
type State string

const (
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateRestarting State = "restarting"
	StateUnhealthy  State = "unhealthy"
	StateDisabled   State = "disabled"
	// StateNeedsLogin: the server wants an OAuth token the hub does not
	// have (or more scope); `mcp-hub login NAME` fixes it (oauth.go).
	StateNeedsLogin State = "needs_login"
	StateClosed     State = "closed"
)

// Listener receives what an upstream sends on its own. The hub implements it.
type Listener interface {
	// UpstreamChanged is called after the upstream's lists were (re)loaded:
	// after a connect, a reconnect, or one of its list_changed notifications.
	UpstreamChanged(u *Upstream)
	// UpstreamNotified is called for notifications/message,
	// notifications/progress and notifications/resources/updated.
	UpstreamNotified(ctx context.Context, u *Upstream, method string, params mcp.Params)
	// UpstreamRequest is called for server-to-client requests:
	// sampling/createMessage, elicitation/create and roots/list.
	UpstreamRequest(ctx context.Context, u *Upstream, method string, params mcp.Params) (mcp.Result, error)
}

// Options tune reconnection. Zero values take the defaults.
type Options struct {
	InitialBackoff time.Duration // first retry delay (500ms)
	MaxBackoff     time.Duration // cap on the retry delay (30s)
	UnhealthyAfter int           // consecutive failures before the upstream is marked unhealthy (5)
	// Cooldown is how long an unhealthy upstream is left alone (calls fail
	// fast) before one probe connection is tried (30s). The circuit breaker:
	// a probe that fails, or a server that dies again before StableAfter,
	// starts another cool-down.
	Cooldown time.Duration
	// StableAfter is how long a connection must last before its end no
	// longer counts as a failure (10s).
	StableAfter time.Duration
	// Secrets are redacted from every log line, status and error this
	// package produces, on top of the server's own header, env and URL
	// credentials (Config.SecretValues).
	Secrets []string
	Logger  *slog.Logger
	// SDKLogger receives the go-sdk client's own records (default: Logger).
	SDKLogger *slog.Logger
	// Builtin makes the in-process server for a 'builtin' upstream.
	Builtin func(name string, env map[string]string) (*mcp.Server, error)
	// OAuth is how streamable HTTP servers that ask for OAuth get tokens.
	OAuth OAuthOptions
	// Redactor, if set, learns the secrets found at run time (OAuth tokens)
	// along with the upstream's own redactor, so the caller's logs and
	// errors redact them too.
	Redactor *redact.Redactor
	// MaxResultBytes bounds one message from the server, a tool result
	// above all (default: max_result_bytes's, config.DefaultMaxResultBytes).
	// Past it only that call fails.
	MaxResultBytes int64
	// HTTPTransport sends the requests to remote servers (default
	// http.DefaultTransport); the hub scopes it to each server's origin.
	HTTPTransport http.RoundTripper
	// Sandbox confines the stdio servers whose config asks for it
	// (package sandbox). A server that asks with no Sandbox here does not
	// start: never silently unconfined.
	Sandbox Sandboxer
}

func (o *Options) defaults() {
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.UnhealthyAfter <= 0 {
		o.UnhealthyAfter = 5
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 30 * time.Second
	}
	if o.StableAfter <= 0 {
		o.StableAfter = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SDKLogger == nil {
		o.SDKLogger = o.Logger
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = config.DefaultMaxResultBytes
	}
}

// Lists is a snapshot of what an upstream offers.
type Lists struct {
	Tools        []*mcp.Tool
	Resources    []*mcp.Resource
	Templates    []*mcp.ResourceTemplate
	Prompts      []*mcp.Prompt
	Instructions string
	Capabilities *mcp.ServerCapabilities
	ServerInfo   *mcp.Implementation
}

// MaxStatusError bounds Status.LastError.
const MaxStatusError = 2 << 10

// Status is what `mcp-hub servers` and /healthz show.
type Status struct {
	Name        string        `json:"name"`
	Transport   string        `json:"transport"`
	State       State         `json:"state"`
	Tools       int           `json:"tools"`
	LastError   string        `json:"last_error,omitempty"`
	Restarts    int           `json:"restarts"`
	ConnectTime time.Duration `json:"connect_time_ns"`
	LastLatency time.Duration `json:"last_call_latency_ns"`
	// ListChanges counts the server's list_changed notifications, and
	// Relists the re-lists they caused (coalesced: at most one running
	// and one queued). Relisting is true while one runs.
	ListChanges int64 `json:"list_changes"`
	Relists     int64 `json:"relists"`
	Relisting   bool  `json:"relisting,omitempty"`
	// ProtocolVersion is the revision the live connection negotiated
	// (2026-07-28 for a stateless server), empty while not connected.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Isolation is the server's isolation mode, and IsolatedProcesses
	// the processes of its own running for principals or sessions
	// (isolated.go); both are left out for a shared server.
	Isolation         string `json:"isolation,omitempty"`
	IsolatedProcesses int    `json:"isolated_processes,omitempty"`
	// Sandbox says how a stdio server is confined ("off" when it is not;
	// config.Sandbox.Summary), empty for other transports.
	Sandbox string `json:"sandbox,omitempty"`
}

// Ready reports whether the server is connected with its lists loaded, so
// that a reader of the hub's status (the gateway's up metric) asks the
// status itself rather than knowing which of the states that is.
func (s Status) Ready() bool { return s.State == StateReady }

// Upstream is one configured server and its live connection.
type Upstream struct {
	cfg      config.Upstream
	opts     Options
	listener Listener
	log      *slog.Logger
	redact   *redact.Redactor
	oauth    *oauthClient // nil unless the server may use OAuth
	watching bool         // guarded by mu: watchLogin runs

	// counter pairs notifications read off the wire with those forwarded, so
	// a call's answer never overtakes its last log or progress message.
	counter notificationCounter
	tap     wireTap

	mu      sync.Mutex
	state   State
	session *mcp.ClientSession
	raw     *stdioConn               // the session's connection, when it takes raw calls (stdio)
	owned   map[any]*ownedSession    // HTTP: each downstream session's own session
	levels  map[any]mcp.LoggingLevel // each downstream session's log level
	level   mcp.LoggingLevel         // the last level any session set
	// statelessFirst: the next stdio connection starts with server/discover,
	// because the last one's initialize failed (sessionOptions).
	statelessFirst bool
	subscribed     map[string]bool // resources subscribed to (Subscribe), made again on each connection
	lists          Lists
	lastErr        error
	failures       int             // consecutive failed connects, and connections that ended before StableAfter
	nextAttempt    time.Time       // when the loop tries again while down
	dropped        error           // why dropSession ended the live session
	life           context.Context // ends at Close; calls in flight end with it
	stderr         *stderrTail
	restarts       int
	// list_changed coalescing (lists.go)
	listChanges  int64
	relists      int64
	relisting    bool // a re-list runs
	relistQueued bool // and another one follows it
	connectTime  time.Duration
	lastLatency  time.Duration
	ready        chan struct{} // closed after the first connect attempt ends, either way
	readyOnce    sync.Once
	cancel       context.CancelFunc
	done         chan struct{}
}

// New makes an Upstream; Start connects it.
func New(cfg config.Upstream, listener Listener, opts Options) *Upstream {
	opts.defaults()
	u := &Upstream{
		cfg:      cfg,
		opts:     opts,
		listener: listener,
		log:      opts.Logger.With("server", cfg.Name),
		redact:   redact.New(opts.Secrets, cfg.SecretValues()),
		state:    StateStarting,
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	u.counter.init()
	u.tap = wireTap{counter: &u.counter, schemas: &rawSchemas{}}
	if opts.OAuth.Store != nil && cfg.Kind() == config.TransportStreamable && !config.HasAuthorizationHeader(cfg.Headers) && !cfg.Disabled {
		u.oauth = newOAuthClient(u)
	}
	if cfg.Disabled {
		u.state = StateDisabled
		u.markAttempted()
	}
	return u
}

// Name is the configured server name.
func (u *Upstream) Name() string { return u.cfg.Name }

// Config returns the server's configuration.
func (u *Upstream) Config() config.Upstream { return u.cfg }

// Attempted is closed once the first connection attempt has ended, whether
// it succeeded or not, so start-up can wait for fast servers only.
func (u *Upstream) Attempted() <-chan struct{} { return u.ready }

func (u *Upstream) markAttempted() { u.readyOnce.Do(func() { close(u.ready) }) }

// Start connects in the background and keeps the connection alive until
// Close. It returns at once.
func (u *Upstream) Start(ctx context.Context) {
	if u.cfg.Disabled {
		close(u.done)
		return
	}
	ctx, u.cancel = context.WithCancel(ctx)
	u.mu.Lock()
	u.life = ctx
	u.mu.Unlock()
	go u.run(ctx)
	u.startRefresh(ctx)
}

// Close ends the connection (and a stdio server's process) and stops reconnecting.
func (u *Upstream) Close() error {
	if u.cancel != nil {
		u.cancel()
	}
	u.mu.Lock()
	cs := u.session
	u.session = nil
	if u.state != StateDisabled {
		u.state = StateClosed
	}
	u.mu.Unlock()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	u.closeOwned()
	<-u.done
	return err
}

// Lists returns the last listing. It is kept while the server is down, so
// its tools stay known and a call gets "server down" instead of "unknown tool".
func (u *Upstream) Lists() Lists {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lists
}

// Status reports state, counts and the last error.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := Status{
		Name:        u.cfg.Name,
		Transport:   u.cfg.Kind(),
		State:       u.state,
		Tools:       len(u.lists.Tools),
		Restarts:    u.restarts,
		ConnectTime: u.connectTime,
		LastLatency: u.lastLatency,
		ListChanges: u.listChanges,
		Relists:     u.relists,
		Relisting:   u.relisting,
	}
	s.ProtocolVersion = negotiated(u.session)
	if u.isolated() {
		s.Isolation, s.IsolatedProcesses = u.cfg.IsolationMode(), len(u.owned)
	}
	if u.cfg.Kind() == config.TransportStdio {
		s.Sandbox = u.cfg.Sandbox.Summary()
	}
	if u.lastErr != nil {
		// Redacted, then bounded and on one line: it can hold what the
		// server wrote (its stderr, its error messages), and goes to
		// /healthz, `mcp-hub servers` and the dashboard.
		s.LastError = clean.Line(u.redact.String(u.lastErr.Error()), MaxStatusError)
	}
	return s
}

// run is the connection loop: connect, serve until the session ends,
// back off, repeat.
func (u *Upstream) run(ctx context.Context) {
	defer close(u.done)
	defer u.markAttempted()
	for ctx.Err() == nil {
		cs, err := u.connect(ctx)
		u.markAttempted()
		if err == nil {
			connected := time.Now()
			err = cs.Wait()
			u.mu.Lock()
			if u.session == cs {
				u.session = nil
			}
			u.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			err = u.redact.Error(err)
			u.log.Warn("upstream connection ended; reconnecting", "err", err)
			// A server that dies soon after every start is crash-looping:
			// count it like a failed start, so backoff grows and the
			// breaker opens.
			cause := u.withStderr(fmt.Errorf("connection ended: %v", orEOF(err)))
			u.mu.Lock()
			if u.dropped != nil {
				cause, u.dropped = u.dropped, nil
			}
			u.mu.Unlock()
			u.setDown(cause, time.Since(connected) < u.opts.StableAfter, true)
		}
		if u.Status().State == StateNeedsLogin {
			u.log.Warn("upstream needs authorization; waiting for `mcp-hub login " + u.cfg.Name + "`")
			u.oauth.waitForLogin(ctx)
			continue
		}
		delay := u.backoff()
		u.mu.Lock()
		u.nextAttempt = time.Now().Add(delay)
		u.mu.Unlock()
		if u.Status().State == StateUnhealthy {
			u.log.Warn("upstream unhealthy; calls fail fast until the next probe", "failures", u.failureCount(), "probe_in", delay.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func orEOF(err error) error {
	if err == nil {
		return errors.New("server closed the connection")
	}
	return err
}

// backoff is the delay before the next attempt: exponential in the number
// of consecutive failures, capped, with ±20% jitter so that many upstreams
// failing together do not retry in lockstep. Once the breaker is open
// (UnhealthyAfter consecutive failures) it is the cool-down instead.
func (u *Upstream) backoff() time.Duration {
	n := u.failureCount()
	d := u.opts.InitialBackoff
	if n >= u.opts.UnhealthyAfter {
		d = u.opts.Cooldown
	} else {
		for i := 1; i < n && d < u.opts.MaxBackoff; i++ {
			d *= 2
		}
		d = min(d, u.opts.MaxBackoff)
	}
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

func (u *Upstream) failureCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.failures
}

// setDown records a failed or ended connection. failed is true for a
// failed start, or a connection that ended before it was stable; ended is
// true when a live connection ended (a restart).
func (u *Upstream) setDown(err error, failed, ended bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lastErr = err
	if nl := (*NeedsLoginError)(nil); errors.As(err, &nl) && u.oauth != nil {
		// Not a failure: no backoff, no breaker; the loop waits for a login.
		u.lastErr = nl
		if ended {
			u.restarts++
		}
		if u.state != StateClosed {
			u.state = StateNeedsLogin
		}
		return
	}
	if failed {
		u.failures++
	} else {
		// A connection that was stable ends: start the count afresh.
		u.failures = 0
	}
	if ended {
		u.restarts++
	}
	switch {
	case u.state == StateClosed:
	case u.failures >= u.opts.UnhealthyAfter:
		u.state = StateUnhealthy
	case u.state == StateStarting && failed:
		// Still starting: the first connect has not succeeded yet.
	default:
		u.state = StateRestarting
	}
}

// connect makes one connection attempt: transport, initialize, list all.
// A panic on the way (what the server answered led the hub's code astray)
// is a failed attempt.
func (u *Upstream) connect(ctx context.Context) (cs *mcp.ClientSession, err error) {
	defer safe.Recover(u.log, "connecting to the server", func(p error) {
		if cs != nil {
			cs.Close()
		}
		cs, err = nil, p
		u.setDown(p, true, false)
	})
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, u.cfg.CallTimeout())
	defer cancel()
	watch := &listenWatch{drop: u.dropSession}
	transport, err := u.transport(ctx, &u.tap, watch)
	if err != nil {
		err = u.redact.Error(err)
		u.log.Error("cannot start upstream", "err", err)
		u.setDown(err, true, false)
		return nil, err
	}
	client := u.newClient(nil, &u.counter)
	cs, err = client.Connect(cctx, transport, u.sessionOptions())
	if err != nil {
		u.connectFailed(err)
		err = u.redact.Error(u.withStderr(fmt.Errorf("connect: %w", err)))
		u.log.Error("cannot connect to upstream", "err", err)
		u.setDown(err, true, false)
		return nil, err
	}
	lists, err := u.listAll(cctx, cs, u.tap.schemas)
	if err != nil {
		cs.Close()
		err = u.redact.Error(u.withStderr(fmt.Errorf("list: %w", err)))
		u.log.Error("cannot list upstream", "err", err)
		u.setDown(err, true, false)
		return nil, err
	}
	u.mu.Lock()
	if u.state == StateClosed {
		u.mu.Unlock()
		cs.Close()
		return nil, errors.New("closed")
	}
	u.session = cs
	defer watch.connected(cs) // after the lock: it may drop cs at once
	u.raw = nil
	if st, ok := transport.(*stdioTransport); ok {
		u.raw = st.conn
	}
	u.lists = lists
	u.state = StateReady
	// failures is not reset here: a server that connects and dies again
	// at once is crash-looping (see setDown), and a successful probe of an
	// unhealthy server only closes the breaker once it stays up.
	u.lastErr = nil
	u.connectTime = time.Since(start)
	u.mu.Unlock()
	u.resubscribe(cctx, cs)
	u.log.Info("upstream ready", "protocol", negotiated(cs), "tools", len(lists.Tools), "resources", len(lists.Resources),
		"prompts", len(lists.Prompts), "took", u.connectTime.Round(time.Millisecond))
	u.changed()
	return cs, nil
}

// UnavailableError is returned for calls to a server that is not connected.
// Clients should retry: the hub is reconnecting in the background.
type UnavailableError struct {
	Server string
	State  State
	Cause  error
	// Failures is the number of consecutive failures (for StateUnhealthy).
	Failures int
	// RetryIn is how long until the hub tries the server again, when known.
	RetryIn time.Duration
}

func (e *UnavailableError) Error() string {
	if e.State == StateNeedsLogin && e.Cause != nil {
		return e.Cause.Error() + "; then retry"
	}
	msg := fmt.Sprintf("server '%s' is %s", e.Server, e.State)
	if e.State == StateUnhealthy && e.Failures > 0 {
		msg += fmt.Sprintf(" after %d consecutive failures", e.Failures)
	}
	if e.Cause != nil {
		msg += " (" + e.Cause.Error() + ")"
	}
	switch e.State {
	case StateNeedsLogin:
		return msg + fmt.Sprintf("; run `mcp-hub login %s`, then retry", e.Server)
	case StateDisabled:
		return msg + "; enable it in the config to use its tools"
	case StateClosed:
		return msg
	case StateUnhealthy:
		if e.RetryIn > 0 {
			return msg + fmt.Sprintf("; calls fail fast until the hub probes it again in %s", e.RetryIn.Round(100*time.Millisecond))
		}
		return msg + "; the hub is probing it again, retry in a moment"
	}
	return msg + "; the hub is reconnecting, retry in a moment"
}

// Session returns the live client session, or an *UnavailableError.
func (u *Upstream) Session() (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sessionLocked()
}

func (u *Upstream) sessionLocked() (*mcp.ClientSession, error) {
	if u.session == nil {
		state := u.state
		if state == StateReady {
			// The connection just ended; the loop has not recorded it yet.
			state = StateRestarting
		}
		return nil, u.unavailableLocked(state, u.lastErr)
	}
	return u.session, nil
}

func (u *Upstream) unavailableLocked(state State, cause error) *UnavailableError {
	e := &UnavailableError{Server: u.cfg.Name, State: state, Cause: cause, Failures: u.failures}
	if !u.nextAttempt.IsZero() {
		e.RetryIn = max(0, time.Until(u.nextAttempt))
	}
	return e
}

// dropSession ends cs if it is still the live session, so that the
// connection loop re-initializes: for an HTTP upstream whose session is
// gone (404) or that answers 5xx or refuses connections. The session ends
// at once, so calls in the meantime fail fast instead of timing out.
func (u *Upstream) dropSession(cs *mcp.ClientSession, cause error) {
	u.mu.Lock()
	live := u.session == cs
	if live {
		u.session = nil
		u.lastErr = cause
		u.dropped = cause
		if u.state == StateReady {
			u.state = StateRestarting
		}
	}
	u.mu.Unlock()
	if live {
		u.log.Warn("upstream transport failed; re-initializing", "err", cause)
		go cs.Close()
	}
}

// transportFailure reports whether err says that the request did not get
// an MCP answer from the server at all: the HTTP request failed (connection
// refused or reset), the server answered with an HTTP error status and no
// JSON-RPC error, or it no longer knows the session (404).
func transportFailure(err error) bool {
	if errors.Is(err, mcp.ErrSessionMissing) {
		return true
	}
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == codeRejected
}

// connectionEnded reports whether a call failed because the connection
// ended under it: the SDK says "connection closed" for calls made while it
// shuts down, and passes the read side's EOF to calls in flight. A call
// sent just as a stdio server died fails on the write instead: "write |1:
// broken pipe", or a closed file once the SDK has closed the pipe.
func connectionEnded(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe)
}

// codeRejected is the code of the SDK's internal "rejected by transport"
// error, which wraps HTTP-level failures of a request.
const codeRejected = -32005

// CallTool calls a tool by its upstream name, bounded by the server's
// timeout. Log and progress notifications the upstream sent before its
// answer are forwarded before CallTool returns.
//
// owner is the downstream session calling: an HTTP upstream runs the call
// in owner's own session (see owned.go), an isolated stdio server in
// owner's process (isolated.go, which refuses a nil owner). It may be nil.
//
// The result is a *RawResult, the server's own bytes, over stdio, and the
// SDK's *mcp.CallToolResult over the other transports.
func (u *Upstream) CallTool(ctx context.Context, owner any, params *mcp.CallToolParams) (mcp.Result, error) {
	u.mu.Lock()
	cs, err := u.sessionLocked()
	raw, life := u.raw, u.life
	u.mu.Unlock()
	if err != nil {
		return nil, err
	}
	shared, counter := cs, &u.counter
	// A stateless server has no sessions to own: every call goes through
	// the shared connection, whose tool list tells the SDK which
	// Mcp-Param-* headers a call needs (go-sdk servers refuse a call
	// without them). What the server asks for during a call comes back in
	// its result, and is answered for owner (callWithInput).
	switch {
	case u.isolated():
		// Never the shared process: it is not the caller's (isolated.go).
		own, release, err := u.isolatedSession(ctx, owner)
		if err != nil {
			return nil, err
		}
		defer release()
		cs, counter, raw = own.cs, &own.counter, own.raw
	case owner != nil && u.ownsSessions() && !stateless(cs):
		if own, err := u.sessionOf(ctx, owner); err == nil {
			cs, counter = own.cs, &own.counter
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, u.cfg.CallTimeout())
	defer cancel()
	// Close must not wait for calls in flight (the SDK's close waits for
	// them): they are cancelled upstream and end at once.
	if life != nil {
		stop := context.AfterFunc(life, cancel)
		defer stop()
	}
	start := time.Now()
	modern := stateless(cs)
	call := func(params *mcp.CallToolParams) (mcp.Result, error) {
		if raw != nil {
			if modern {
				rawMeta(cs, params)
			}
			p, err := toolCallParams(params)
			if err != nil {
				return nil, err
			}
			data, err := raw.Call(ctx, "tools/call", p)
			if err != nil {
				return nil, err
			}
			return &RawResult{JSON: data}, nil
		}
		typed, err := cs.CallTool(ctx, params)
		if err != nil {
			return nil, err
		}
		return typed, nil
	}
	params = u.prepareCall(cs, owner, params)
	var res mcp.Result
	if modern {
		res, err = u.callWithInput(ctx, owner, params, call)
	} else {
		res, err = call(params)
	}
	counter.wait()
	elapsed := time.Since(start)
	u.mu.Lock()
	u.lastLatency = elapsed
	u.mu.Unlock()
	if err != nil {
		if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok && rpc.Code == CodeResultTooLarge {
			err = u.tooLarge() // the SDK's decoded call: an isError for the client, like a raw call's
		}
		var stalled *StalledError
		switch {
		case errors.As(err, &stalled):
			return nil, &UnavailableError{Server: u.cfg.Name, State: StateRestarting, Cause: stalled}
		case life != nil && life.Err() != nil:
			return nil, &UnavailableError{Server: u.cfg.Name, State: StateClosed, Cause: errors.New("the hub is shutting down")}
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("server '%s': tool '%s' timed out after %s and was cancelled (raise 'timeout' for this server): %w",
				u.cfg.Name, params.Name, u.cfg.CallTimeout(), context.DeadlineExceeded)
		case connectionEnded(err) && u.cfg.Kind() == config.TransportStdio:
			return nil, &UnavailableError{Server: u.cfg.Name, State: StateRestarting,
				Cause: errors.New("the server exited during the call and was restarted")}
		case connectionEnded(err):
			return nil, &UnavailableError{Server: u.cfg.Name, State: StateRestarting,
				Cause: errors.New("the connection to the server ended during the call and is being re-established")}
		case errors.As(err, new(*NeedsLoginError)):
			return nil, u.needsLogin(err)
		case transportFailure(err) && ctx.Err() == nil:
			cause := u.redact.Error(err)
			if cs == shared {
				u.dropSession(cs, cause)
			} else {
				cs.Close() // its end forgets it; the next call opens another
			}
			return nil, &UnavailableError{Server: u.cfg.Name, State: StateRestarting, Cause: cause}
		}
		return nil, u.redact.Error(err)
	}
	return res, nil
}

// notificationCounter is the fix for an SDK ordering trap: the client hands
// a response to its caller before it has finished handling notifications
// that arrived earlier on the wire. Reads are counted as they come off the
// connection, forwards as they finish, and a call waits until both agree.
type notificationCounter struct {
	mu        sync.Mutex
	cond      *sync.Cond
	read      int64
	forwarded int64
}

func (c *notificationCounter) init() { c.cond = sync.NewCond(&c.mu) }

func (c *notificationCounter) sawOne() {
	c.mu.Lock()
	c.read++
	c.mu.Unlock()
}

func (c *notificationCounter) forwardedOne() {
	c.mu.Lock()
	c.forwarded++
	c.mu.Unlock()
	c.cond.Broadcast()
}

// wait blocks until every notification read so far was forwarded, or a
// short bound passes (a stuck downstream must not stall the answer).
func (c *notificationCounter) wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.read
	if c.forwarded >= target {
		return
	}
	// On a loaded machine forwarding one message can take a while; a
	// second is still short for a stuck downstream, which pays it once.
	const bound = time.Second
	deadline := time.Now().Add(bound)
	stop := time.AfterFunc(bound, c.cond.Broadcast)
	defer stop.Stop()
	for c.forwarded < target && time.Now().Before(deadline) {
		c.cond.Wait()
	}
	// A notification the SDK dropped would otherwise cost every later call
	// the full bound: resynchronise.
	if c.forwarded < target {
		c.forwarded = target
	}
}

package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is what the hub asks upstreams for. The SDK's 2026 draft
// broke sampling inside tool calls, setLevel and list-change subscriptions in
// our tests, so we stay on the last stable revision.
const ProtocolVersion = "2025-11-25"

// State is where an Upstream is in its life.
type State string

const (
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateRestarting State = "restarting"
	StateUnhealthy  State = "unhealthy"
	StateDisabled   State = "disabled"
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
	Logger         *slog.Logger
	// SDKLogger receives the go-sdk client's own records (default: Logger).
	SDKLogger *slog.Logger
	// Builtin makes the in-process server for a 'builtin' upstream.
	Builtin func(name string, env map[string]string) (*mcp.Server, error)
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
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SDKLogger == nil {
		o.SDKLogger = o.Logger
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
}

// Upstream is one configured server and its live connection.
type Upstream struct {
	cfg      Config
	opts     Options
	listener Listener
	log      *slog.Logger

	// counter pairs notifications read off the wire with those forwarded, so
	// a call's answer never overtakes its last log or progress message.
	counter notificationCounter

	mu          sync.Mutex
	state       State
	session     *mcp.ClientSession
	lists       Lists
	lastErr     error
	failures    int // consecutive failed connects
	restarts    int
	connectTime time.Duration
	lastLatency time.Duration
	ready       chan struct{} // closed after the first connect attempt ends, either way
	readyOnce   sync.Once
	cancel      context.CancelFunc
	done        chan struct{}
}

// New makes an Upstream; Start connects it.
func New(cfg Config, listener Listener, opts Options) *Upstream {
	opts.defaults()
	u := &Upstream{
		cfg:      cfg,
		opts:     opts,
		listener: listener,
		log:      opts.Logger.With("server", cfg.Name),
		state:    StateStarting,
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	u.counter.cond = sync.NewCond(&u.counter.mu)
	if cfg.Disabled {
		u.state = StateDisabled
		u.markAttempted()
	}
	return u
}

// Name is the configured server name.
func (u *Upstream) Name() string { return u.cfg.Name }

// Config returns the server's configuration.
func (u *Upstream) Config() Config { return u.cfg }

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
	go u.run(ctx)
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
	}
	if u.lastErr != nil {
		s.LastError = u.lastErr.Error()
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
			u.log.Warn("upstream connection ended; reconnecting", "err", err)
			// A server that dies soon after every start is crash-looping:
			// count it like a failed start, so backoff grows and the
			// breaker opens.
			u.setDown(fmt.Errorf("connection ended: %v", orEOF(err)), time.Since(connected) < stableAfter)
		}
		delay := u.backoff()
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
// failing together do not retry in lockstep.
func (u *Upstream) backoff() time.Duration {
	u.mu.Lock()
	n := u.failures
	u.mu.Unlock()
	d := u.opts.InitialBackoff
	for i := 1; i < n && d < u.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, u.opts.MaxBackoff)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

// stableAfter is how long a connection must last before its end no longer
// counts as a failure.
const stableAfter = 10 * time.Second

// setDown records a failed or ended connection. failed is true for a
// failed start, or a connection that ended before it was stable.
func (u *Upstream) setDown(err error, failed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lastErr = err
	if failed {
		u.failures++
	}
	if u.state == StateReady { // a live connection ended
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
func (u *Upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, u.cfg.CallTimeout())
	defer cancel()
	transport, err := u.transport(ctx)
	if err != nil {
		u.log.Error("cannot start upstream", "err", err)
		u.setDown(err, true)
		return nil, err
	}
	client := u.newClient()
	cs, err := client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		err = fmt.Errorf("connect: %w", err)
		u.log.Error("cannot connect to upstream", "err", err)
		u.setDown(err, true)
		return nil, err
	}
	lists, err := listAll(cctx, cs)
	if err != nil {
		cs.Close()
		err = fmt.Errorf("list: %w", err)
		u.log.Error("cannot list upstream", "err", err)
		u.setDown(err, true)
		return nil, err
	}
	u.mu.Lock()
	if u.state == StateClosed {
		u.mu.Unlock()
		cs.Close()
		return nil, errors.New("closed")
	}
	u.session = cs
	u.lists = lists
	u.state = StateReady
	u.failures = 0
	u.lastErr = nil
	u.connectTime = time.Since(start)
	u.mu.Unlock()
	u.log.Info("upstream ready", "tools", len(lists.Tools), "resources", len(lists.Resources),
		"prompts", len(lists.Prompts), "took", u.connectTime.Round(time.Millisecond))
	u.listener.UpstreamChanged(u)
	return cs, nil
}

// listAll reads every page of everything the server says it has.
func listAll(ctx context.Context, cs *mcp.ClientSession) (Lists, error) {
	init := cs.InitializeResult()
	l := Lists{Capabilities: init.Capabilities, Instructions: init.Instructions, ServerInfo: init.ServerInfo}
	caps := init.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	var err error
	if caps.Tools != nil {
		if l.Tools, err = collect(cs.Tools(ctx, nil)); err != nil {
			return l, fmt.Errorf("tools: %w", err)
		}
	}
	if caps.Resources != nil {
		if l.Resources, err = collect(cs.Resources(ctx, nil)); err != nil {
			return l, fmt.Errorf("resources: %w", err)
		}
		// Templates are optional even for servers with resources.
		l.Templates, _ = collect(cs.ResourceTemplates(ctx, nil))
	}
	if caps.Prompts != nil {
		if l.Prompts, err = collect(cs.Prompts(ctx, nil)); err != nil {
			return l, fmt.Errorf("prompts: %w", err)
		}
	}
	return l, nil
}

func collect[T any](seq func(func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// relist refreshes the snapshot after the upstream said its lists changed.
func (u *Upstream) relist(ctx context.Context) {
	cs, err := u.Session()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, u.cfg.CallTimeout())
	defer cancel()
	lists, err := listAll(ctx, cs)
	if err != nil {
		u.log.Warn("re-list failed", "err", err)
		return
	}
	u.mu.Lock()
	u.lists = lists
	u.mu.Unlock()
	u.listener.UpstreamChanged(u)
}

// UnavailableError is returned for calls to a server that is not connected.
// Clients should retry: the hub is reconnecting in the background.
type UnavailableError struct {
	Server string
	State  State
	Cause  error
}

func (e *UnavailableError) Error() string {
	msg := fmt.Sprintf("server '%s' is %s", e.Server, e.State)
	if e.Cause != nil {
		msg += " (" + e.Cause.Error() + ")"
	}
	switch e.State {
	case StateDisabled:
		return msg + "; enable it in the config to use its tools"
	case StateClosed:
		return msg
	}
	return msg + "; the hub is reconnecting, retry in a moment"
}

// Session returns the live client session, or an *UnavailableError.
func (u *Upstream) Session() (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session == nil {
		return nil, &UnavailableError{Server: u.cfg.Name, State: u.state, Cause: u.lastErr}
	}
	return u.session, nil
}

// CallTool calls a tool by its upstream name, bounded by the server's
// timeout. Log and progress notifications the upstream sent before its
// answer are forwarded before CallTool returns.
func (u *Upstream) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	cs, err := u.Session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, u.cfg.CallTimeout())
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, params)
	u.counter.wait()
	elapsed := time.Since(start)
	u.mu.Lock()
	u.lastLatency = elapsed
	u.mu.Unlock()
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("server '%s': tool '%s' timed out after %s (raise 'timeout' for this server): %w",
				u.cfg.Name, params.Name, u.cfg.CallTimeout(), context.DeadlineExceeded)
		case errors.Is(err, mcp.ErrConnectionClosed):
			return nil, &UnavailableError{Server: u.cfg.Name, State: StateRestarting,
				Cause: errors.New("the server exited during the call and is being restarted")}
		}
		return nil, err
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
	deadline := time.Now().Add(200 * time.Millisecond)
	stop := time.AfterFunc(200*time.Millisecond, c.cond.Broadcast)
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

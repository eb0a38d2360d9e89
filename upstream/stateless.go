package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// The stateless revision of MCP (2026-07-28) on the upstream side.
//
// Which revision a connection asks for depends on the transport
// (sessionOptions). Asked for it, go-sdk's client sends server/discover
// first and falls back to initialize (at ProtocolVersion) when the server
// does not know it. What differs once a server speaks it:
//
//   - Every request carries the protocol version, the client's info and
//     capabilities in its _meta. The SDK adds them to what it sends; raw
//     stdio calls add them here (requestMeta).
//   - There is no logging/setLevel: the level travels in each request's
//     _meta (io.modelcontextprotocol/logLevel). SetLoggingLevel only
//     remembers it, and each call carries its owner's level (logLevelFor).
//   - list_changed notifications and resource updates arrive on
//     subscriptions/listen streams, which the SDK opens (at connect for list
//     changes, at Subscribe for a resource) and whose notifications reach
//     the same handlers as before.
//   - A server that needs sampling, elicitation or roots during a call
//     answers it with resultType "input_required", carrying the requests
//     and an opaque state; the client answers them and calls again. The hub
//     answers them with its Listener, exactly as the legacy server-to-client
//     requests are, for the session that made the call, and retries
//     (callWithInput). go-sdk's client has that loop too, but it answers
//     roots/list from the client's own fixed list and judges elicitation
//     schemas itself, and raw stdio calls never pass through it: so it is
//     disabled (newClient) and the hub runs its own.

// StatelessProtocolVersion is what the hub asks upstreams for first. A
// server that does not speak it gets initialize at ProtocolVersion.
const StatelessProtocolVersion = "2026-07-28"

// sessionOptions says which revision the next connection asks for. A
// server's protocol_version decides; without one:
//
//   - streamable HTTP: the stateless revision first. It is what makes an
//     HTTP server sessionless, and a stateless server can reach a client
//     only through input_required results.
//   - stdio: initialize first, and server/discover after the server
//     refused an initialize. A server that speaks both revisions serves every tool on a
//     connection that used initialize: tools written for input_required are
//     answered by its SDK through the legacy requests, while under the
//     stateless revision go-sdk refuses the legacy requests other tools
//     still send (measured with go-sdk's everything-server: the 2025-11-25
//     conformance scenarios for sampling and elicitation fail through a
//     stateless connection). A stdio connection has state either way.
//   - SSE (the older HTTP transport) and builtins: initialize.
func (u *Upstream) sessionOptions() *mcp.ClientSessionOptions {
	v := u.cfg.ProtocolVersion
	if v == "" {
		switch u.cfg.Kind() {
		case config.TransportStreamable:
			v = StatelessProtocolVersion
		case config.TransportStdio:
			v = ProtocolVersion
			u.mu.Lock()
			if u.statelessFirst {
				v = StatelessProtocolVersion
			}
			u.mu.Unlock()
		default:
			v = ProtocolVersion
		}
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: v}
}

// connectFailed notes a failed handshake: a stdio server that chose no
// revision and refused it with a JSON-RPC error gets the other handshake
// next time (sessionOptions), so a server that speaks only the stateless
// revision is reached on the next attempt. A server that crashed or did
// not answer keeps its handshake: a dual-revision server that failed once
// must not end up on the stateless one (see sessionOptions).
func (u *Upstream) connectFailed(err error) {
	if u.cfg.ProtocolVersion != "" || u.cfg.Kind() != config.TransportStdio || !errors.As(err, new(*jsonrpc.Error)) {
		return
	}
	u.mu.Lock()
	u.statelessFirst = !u.statelessFirst
	u.mu.Unlock()
}

// Keys of the per-request _meta of the stateless revision. They describe
// one hop, so what a downstream client put there is not forwarded: the
// hub sends its own.
const (
	metaProtocolVersion    = mcp.MetaKeyProtocolVersion
	metaClientInfo         = mcp.MetaKeyClientInfo
	metaClientCapabilities = mcp.MetaKeyClientCapabilities
	metaLogLevel           = mcp.MetaKeyLogLevel
)

// DropHopMeta deletes from meta, in place, the keys of the per-request
// _meta that describe the downstream hop (protocol version, client info
// and capabilities, log level): they are not the upstream's to read.
func DropHopMeta(meta mcp.Meta) {
	for _, k := range [...]string{metaProtocolVersion, metaClientInfo, metaClientCapabilities, metaLogLevel} {
		delete(meta, k)
	}
}

// MaxInputRounds bounds the input_required rounds of one call: past it the
// call fails. go-sdk's own client stops at the same number.
const MaxInputRounds = 10

// MaxInputRequests bounds the input requests of one round: each reaches
// the user (a form, a sampling request), and a server cannot make the hub
// ask a client thousands of questions. Past it the request fails.
const MaxInputRequests = 16

// maxBusyRounds bounds the rounds in which the server asked for nothing
// (an input_required result without requests: it is shedding load).
const maxBusyRounds = 3

// stateless reports whether cs negotiated the stateless revision.
func stateless(cs *mcp.ClientSession) bool {
	if cs == nil {
		return false
	}
	init := cs.InitializeResult()
	return init != nil && init.ProtocolVersion >= StatelessProtocolVersion
}

// Subscribe subscribes to a resource's updates on the live connection, and
// again on every later one (a stateless server's subscription is a
// subscriptions/listen stream, which a new connection does not have; an
// older server forgets its subscriptions with the session).
func (u *Upstream) Subscribe(ctx context.Context, uri string) error {
	cs, err := u.Session()
	if err != nil {
		return err
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return err
	}
	u.mu.Lock()
	if u.subscribed == nil {
		u.subscribed = map[string]bool{}
	}
	u.subscribed[uri] = true
	u.mu.Unlock()
	return nil
}

// Unsubscribe ends a subscription made with Subscribe.
func (u *Upstream) Unsubscribe(ctx context.Context, uri string) error {
	u.mu.Lock()
	delete(u.subscribed, uri)
	u.mu.Unlock()
	cs, err := u.Session()
	if err != nil {
		return err
	}
	return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}

// resubscribe makes the subscriptions of earlier connections on cs.
func (u *Upstream) resubscribe(ctx context.Context, cs *mcp.ClientSession) {
	u.mu.Lock()
	uris := slices.Sorted(maps.Keys(u.subscribed))
	u.mu.Unlock()
	for _, uri := range uris {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			u.log.Warn("cannot subscribe again to a resource after reconnecting", "uri", uri, "err", u.redact.Error(err))
		}
	}
}

// ProtocolVersion is the revision the live connection negotiated:
// StatelessProtocolVersion for a server reached in the stateless revision,
// empty while the server is not connected.
func (u *Upstream) ProtocolVersion() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return negotiated(u.session)
}

// negotiated is the protocol version cs speaks ("" before it is connected).
func negotiated(cs *mcp.ClientSession) string {
	if cs == nil || cs.InitializeResult() == nil {
		return ""
	}
	return cs.InitializeResult().ProtocolVersion
}

// hopMeta returns meta without the keys that describe the downstream hop
// (stripped says whether there were any), and the log level the downstream
// asked for in it, if any. meta itself is not changed.
func hopMeta(meta mcp.Meta) (out mcp.Meta, level mcp.LoggingLevel, stripped bool) {
	for k, v := range meta {
		switch k {
		case metaProtocolVersion, metaClientInfo, metaClientCapabilities:
			stripped = true
		case metaLogLevel:
			stripped = true
			if s, ok := v.(string); ok {
				level = mcp.LoggingLevel(s)
			}
		}
	}
	if !stripped {
		return meta, level, false
	}
	out = maps.Clone(meta)
	DropHopMeta(out)
	if len(out) == 0 {
		out = nil
	}
	return out, level, true
}

// prepareMeta returns the _meta to send to cs for a request: the
// downstream hop's keys removed, and on a stateless session the log level
// (the downstream's own, else owner's) added. The SDK adds the rest of the
// stateless _meta itself, into the map it is given, so a stateless request
// always gets a map of its own; raw calls get the rest from rawMeta. meta
// is not changed.
func (u *Upstream) prepareMeta(cs *mcp.ClientSession, owner any, meta mcp.Meta) mcp.Meta {
	out, level, stripped := hopMeta(meta)
	if !stateless(cs) {
		return out
	}
	if !stripped {
		out = maps.Clone(out)
	}
	if caps, ok := callerCapabilities(meta); ok {
		if out == nil {
			out = mcp.Meta{}
		}
		out[metaClientCapabilities] = caps
	}
	if level == "" {
		level = u.logLevelFor(owner)
	}
	if level != "" {
		if out == nil {
			out = mcp.Meta{}
		}
		out[metaLogLevel] = string(level)
	}
	return out
}

// prepareCall returns params with prepareMeta's _meta, params itself when
// that changes nothing.
func (u *Upstream) prepareCall(cs *mcp.ClientSession, owner any, params *mcp.CallToolParams) *mcp.CallToolParams {
	_, _, stripped := hopMeta(params.Meta)
	if !stripped && !stateless(cs) {
		return params
	}
	p := *params
	p.Meta = u.prepareMeta(cs, owner, params.Meta)
	return &p
}

// hopMetaMiddleware keeps the downstream hop's _meta keys off everything
// the SDK sends for the hub (what the hub forwards as it came: completions,
// resource lists): on a session of the older revision they are removed, on
// a stateless one the hub's own values replace them, the capabilities
// narrowed to what the caller declared (callerCapabilities; the SDK adds
// its own only where a key is missing); a log level the downstream asked
// for stays on a stateless session. Tool calls, prompts and resources get theirs from
// prepareMeta before, with the caller's level.
func hopMetaMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "server/discover":
			return next(ctx, method, req)
		}
		p := req.GetParams()
		if p == nil || reflect.ValueOf(p).IsNil() {
			return next(ctx, method, req)
		}
		meta := p.GetMeta()
		if _, _, stripped := hopMeta(meta); !stripped {
			return next(ctx, method, req)
		}
		cs, _ := req.GetSession().(*mcp.ClientSession)
		out := maps.Clone(meta)
		if stateless(cs) {
			for k, v := range ownMeta(cs) {
				if _, ok := out[k]; ok {
					out[k] = v
				}
			}
			if caps, ok := callerCapabilities(meta); ok {
				out[metaClientCapabilities] = caps // narrowed, not the hub's own
			}
		} else {
			DropHopMeta(out)
		}
		p.SetMeta(out)
		return next(ctx, method, req)
	}
}

// callerCapabilities are the hub's client capabilities narrowed to what a
// caller of the stateless revision declared in its request's _meta: a
// stateless server asks for input only through capabilities the request
// declares, and the hub can pass on only what its caller can answer. A
// caller that did not declare elicitation must not get a server's
// elicitation (the hub would have to refuse it, failing the call). It is
// the hub's capability object with only the keys the caller declared. false
// when meta declares nothing (a caller of the older revision): the hub's
// own capabilities go, and what the caller cannot answer is refused.
func callerCapabilities(meta mcp.Meta) (map[string]json.RawMessage, bool) {
	v, ok := meta[metaClientCapabilities]
	if !ok {
		return nil, false
	}
	var declared, own map[string]json.RawMessage
	raw, err := json.Marshal(v)
	if err != nil || json.Unmarshal(raw, &declared) != nil {
		return nil, false
	}
	caps := clientCapabilities()
	caps.Roots = *caps.RootsV2 // what the SDK puts on the wire for it
	raw, err = json.Marshal(caps)
	if err != nil || json.Unmarshal(raw, &own) != nil {
		return nil, false
	}
	for k := range own {
		if _, ok := declared[k]; !ok {
			delete(own, k)
		}
	}
	return own, true
}

// ownMeta is the hub's own stateless _meta on cs, as the SDK writes it.
func ownMeta(cs *mcp.ClientSession) mcp.Meta {
	caps := clientCapabilities()
	caps.Roots = *caps.RootsV2 // what the SDK puts on the wire for it
	return mcp.Meta{
		metaProtocolVersion:    negotiated(cs),
		metaClientInfo:         clientInfo(),
		metaClientCapabilities: caps,
	}
}

// rawMeta adds to the _meta of a stateless call what the SDK adds to its
// own requests: the protocol version, the hub's client info and
// capabilities. params comes from prepareCall, a copy of its own.
func rawMeta(cs *mcp.ClientSession, params *mcp.CallToolParams) {
	if params.Meta == nil {
		params.Meta = mcp.Meta{}
	}
	for k, v := range ownMeta(cs) {
		if _, ok := params.Meta[k]; !ok { // as the SDK: a narrowed capabilities object stays
			params.Meta[k] = v
		}
	}
}

// logLevelFor is the level owner set (any session's, last, when owner set
// none): what the hub asks a stateless server for on owner's calls.
func (u *Upstream) logLevelFor(owner any) mcp.LoggingLevel {
	u.mu.Lock()
	defer u.mu.Unlock()
	if owner != nil {
		if l, ok := u.levels[owner]; ok {
			return l
		}
	}
	return u.level
}

// inputRequired takes apart a result that asks for input (of tools/call,
// prompts/get or resources/read). ok is false for any other result.
func inputRequired(res mcp.Result) (requests mcp.InputRequestMap, state string, ok bool, err error) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState, r.NeedsInput(), nil
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState, r.NeedsInput(), nil
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState, r.NeedsInput(), nil
	case *RawResult:
		if !bytes.Contains(r.JSON, []byte(`"input_required"`)) {
			return nil, "", false, nil
		}
		var typed mcp.CallToolResult
		if err := json.Unmarshal(r.JSON, &typed); err != nil {
			return nil, "", false, fmt.Errorf("reading an input_required result: %w", err)
		}
		return inputRequired(&typed)
	}
	return nil, "", false, nil
}

// answerInput answers a server's input requests through the Listener, as
// the server-to-client requests of the legacy protocol are: in owner's
// name (the hub routes them to the session that made the call), one after
// the other, so a client is never asked two things at once.
func (u *Upstream) answerInput(ctx context.Context, owner any, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if owner != nil {
		ctx = context.WithValue(ctx, ownerKey{}, owner)
	}
	responses := make(mcp.InputResponseMap, len(requests))
	for id, ir := range requests {
		var method string
		var params mcp.Params
		switch p := ir.(type) {
		case *mcp.ElicitParams:
			method, params = MethodElicit, p
		case *mcp.CreateMessageParams:
			method, params = MethodCreateMessage, p
		case *mcp.CreateMessageWithToolsParams:
			method, params = MethodCreateMessage, p
		case *mcp.ListRootsParams:
			method, params = MethodListRoots, p
		default:
			return nil, fmt.Errorf("input request %q: unsupported type %T", id, ir)
		}
		res, err := u.request(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("input request %q (%s): %w", id, method, err)
		}
		resp, ok := res.(mcp.InputResponse)
		if !ok {
			return nil, fmt.Errorf("input request %q (%s): the client's answer is a %T", id, method, res)
		}
		responses[id] = resp
	}
	return responses, nil
}

// withInput runs call (one request: tools/call, prompts/get or
// resources/read) until the server stops asking for input, answering each
// round with answerInput and calling again with the answers and the
// server's state (retry makes that request), at most MaxInputRounds times.
// what names the request in errors.
func withInput[P any](ctx context.Context, u *Upstream, owner any, what string, params *P,
	call func(*P) (mcp.Result, error), retry func(*P, mcp.InputResponseMap, string) *P) (mcp.Result, error) {
	busy := 0
	for round := 1; ; round++ {
		res, err := call(params)
		if err != nil {
			return nil, err
		}
		requests, state, ok, err := inputRequired(res)
		if err != nil || !ok {
			return res, err
		}
		if len(requests) == 0 {
			if busy++; busy >= maxBusyRounds {
				return nil, fmt.Errorf("server '%s': %s is busy (asked for no input %d times); retry later", u.cfg.Name, what, busy)
			}
		}
		if len(requests) > MaxInputRequests {
			return nil, fmt.Errorf("server '%s': %s asked for %d inputs at once; the hub answers at most %d", u.cfg.Name, what, len(requests), MaxInputRequests)
		}
		if round >= MaxInputRounds {
			return nil, fmt.Errorf("server '%s': %s asked for input %d times; the hub stops there", u.cfg.Name, what, round)
		}
		responses, err := u.answerInput(ctx, owner, requests)
		if err != nil {
			return nil, fmt.Errorf("server '%s': %s: %w", u.cfg.Name, what, err)
		}
		params = retry(params, responses, state)
	}
}

// callWithInput is withInput for a tools/call.
func (u *Upstream) callWithInput(ctx context.Context, owner any, params *mcp.CallToolParams,
	call func(*mcp.CallToolParams) (mcp.Result, error)) (mcp.Result, error) {
	return withInput(ctx, u, owner, fmt.Sprintf("tool '%s'", params.Name), params, call,
		func(p *mcp.CallToolParams, responses mcp.InputResponseMap, state string) *mcp.CallToolParams {
			next := *p
			next.InputResponses, next.RequestState = responses, state
			return &next
		})
}

// GetPrompt gets a prompt by its upstream name for owner (the downstream
// session asking; may be nil). What a stateless server asks for meanwhile
// (input_required) is answered for owner, as for a tool call.
func (u *Upstream) GetPrompt(ctx context.Context, owner any, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	cs, release, err := u.sessionFor(ctx, owner)
	if err != nil {
		return nil, err
	}
	defer release()
	p := *params
	p.Meta = u.prepareMeta(cs, owner, params.Meta)
	res, err := withInput(ctx, u, owner, fmt.Sprintf("prompt '%s'", params.Name), &p,
		func(p *mcp.GetPromptParams) (mcp.Result, error) { return cs.GetPrompt(ctx, p) },
		func(p *mcp.GetPromptParams, responses mcp.InputResponseMap, state string) *mcp.GetPromptParams {
			next := *p
			next.InputResponses, next.RequestState = responses, state
			return &next
		})
	if err != nil {
		return nil, err
	}
	return res.(*mcp.GetPromptResult), nil
}

// ReadResource reads a resource for owner (may be nil), answering what a
// stateless server asks for meanwhile as GetPrompt does.
func (u *Upstream) ReadResource(ctx context.Context, owner any, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	cs, release, err := u.sessionFor(ctx, owner)
	if err != nil {
		return nil, err
	}
	defer release()
	p := *params
	p.Meta = u.prepareMeta(cs, owner, params.Meta)
	res, err := withInput(ctx, u, owner, fmt.Sprintf("resource '%s'", params.URI), &p,
		func(p *mcp.ReadResourceParams) (mcp.Result, error) { return cs.ReadResource(ctx, p) },
		func(p *mcp.ReadResourceParams, responses mcp.InputResponseMap, state string) *mcp.ReadResourceParams {
			next := *p
			next.InputResponses, next.RequestState = responses, state
			return &next
		})
	if err != nil {
		return nil, err
	}
	return res.(*mcp.ReadResourceResult), nil
}

// listenWatch notices the end of a connection's subscriptions/listen
// streams. go-sdk's client opens them once (at connect for list changes,
// at Subscribe for a resource) and does not open one again when the
// server or the network ends it: list changes and resource updates would
// stop arriving while the connection looks healthy. So the end of one
// drops the connection (the drop func, Upstream.dropSession), and the
// connection loop connects again, listens again and re-lists, which also
// picks up what changed meanwhile. A stream the hub itself ends (an
// unsubscribe, a close) cancels its request first and is not counted.
type listenWatch struct {
	drop func(*mcp.ClientSession, error)

	mu    sync.Mutex
	cs    *mcp.ClientSession // the connection's session, once connected
	ended error              // why a stream ended, if one did
}

// connected says which session the connection's streams belong to; one
// that ended during the connect drops it now.
func (w *listenWatch) connected(cs *mcp.ClientSession) {
	w.mu.Lock()
	w.cs = cs
	ended := w.ended
	w.mu.Unlock()
	if ended != nil {
		w.drop(cs, ended)
	}
}

func (w *listenWatch) end(err error) {
	w.mu.Lock()
	if w.ended != nil {
		w.mu.Unlock()
		return
	}
	w.ended = err
	cs := w.cs
	w.mu.Unlock()
	if cs != nil {
		w.drop(cs, err)
	}
}

// listenRoundTripper hands the event streams that answer
// subscriptions/listen requests (the SDK names the method in the
// Mcp-Method header) to its watch.
type listenRoundTripper struct {
	base  http.RoundTripper
	watch *listenWatch
}

func (t *listenRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Header.Get("Mcp-Method") != "subscriptions/listen" ||
		resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &listenBody{ReadCloser: resp.Body, ctx: req.Context(), watch: t.watch}
	return resp, nil
}

// listenBody reports the end of a listen stream that its request did not
// cancel.
type listenBody struct {
	io.ReadCloser
	ctx   context.Context
	watch *listenWatch
	once  sync.Once
}

func (b *listenBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && b.ctx.Err() == nil {
		b.once.Do(func() {
			if err == io.EOF {
				err = errors.New("the server closed it")
			}
			b.watch.end(fmt.Errorf("the server's subscriptions/listen stream ended (%v); connecting again", err))
		})
	}
	return n, err
}

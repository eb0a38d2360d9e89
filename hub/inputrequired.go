package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// A modern client cannot be sent a request (sampling, elicitation, roots):
// a tool that needs one answers the call with resultType "input_required",
// the requests, and an opaque requestState; the client retries the call
// with the answers and that state (SEP-2322). An upstream of the legacy era
// does send such requests, in the middle of its call. The hub bridges the
// two: a modern call runs its upstream call in a goroutine of its own
// (suspension); when the upstream sends a request, the client's call is
// answered input_required with it and a requestState naming the suspended
// call, which goes on waiting; the retry hands the client's answer to the
// upstream and waits again, for the call's result or its next request.
//
// A suspended call is still in flight to its upstream: a shared (stdio)
// upstream's further requests and logs reach it only while no other
// client calls that upstream (attribution.go's router), and queue for its next
// round.
//
// A suspended call lives on the replica that holds it: a retry that lands
// on another replica gets an error naming the expired or unknown state
// (an upstream call cannot move). It waits for the retry at most
// suspendTimeout; then the upstream's request fails and the call is
// cancelled. At most protocol.max_waiting_calls calls are suspended at
// once, and at most protocol.max_waiting_calls_per_principal of one
// principal's (so that one principal cannot take them all); past either,
// the call that would wait is answered with an error saying so, and its
// upstream's request fails.
const (
	suspendTimeout = 5 * time.Minute
	// statePrefix starts the requestState of a suspended call; any other
	// state belongs to an upstream of the modern era and goes through.
	statePrefix = "mcp-hub-input-"
)

// suspensions are the suspended calls of the hub, by requestState.
type suspensions struct {
	mu sync.Mutex
	m  map[string]*suspension
	// per counts the suspended calls of each principal (Principal.Key).
	per map[string]int
}

// add keeps sp under state; under mu.
func (ss *suspensions) add(state string, sp *suspension) {
	if ss.m == nil {
		ss.m, ss.per = map[string]*suspension{}, map[string]int{}
	}
	ss.m[state] = sp
	ss.per[sp.principal]++
}

// remove drops the suspension of state and reports whether it was there;
// under mu.
func (ss *suspensions) remove(state string) (*suspension, bool) {
	sp, ok := ss.m[state]
	if !ok {
		return nil, false
	}
	delete(ss.m, state)
	if ss.per[sp.principal]--; ss.per[sp.principal] <= 0 {
		delete(ss.per, sp.principal)
	}
	return sp, true
}

// suspension is one modern call whose upstream call runs on its own.
type suspension struct {
	session   *Session
	principal string                  // whose share of the waiting calls it takes (Principal.Key)
	first     context.Context         // the request that began the call (its CallTraces)
	tool      string                  // what was called: method and name (modernRequest.what)
	caps      *mcp.ClientCapabilities // what the client declared on the call
	cancel    context.CancelFunc
	result    chan callOutcome // the upstream call's outcome; buffered
	asks      chan *inputAsk   // what the upstream asks for during the call
	done      chan struct{}    // closed when the call is over or abandoned
	once      sync.Once

	// Guarded by suspensions.mu while the call is suspended; owned by
	// the waiting request otherwise.
	state   string
	pending *inputAsk // the ask the client was sent and has not answered
	round   int
	timer   *time.Timer
}

type callOutcome struct {
	res mcp.Result
	err error
}

// inputAsk is one request of the upstream, waiting for the client.
type inputAsk struct {
	method string
	params mcp.InputRequest
	reply  chan callOutcome // buffered
}

type suspensionKey struct{}

func suspensionOf(ctx context.Context) *suspension {
	sp, _ := ctx.Value(suspensionKey{}).(*suspension)
	return sp
}

// end finishes the suspension: the call is cancelled (if it still runs)
// and an upstream waiting for an answer gets err.
func (sp *suspension) end(err error) {
	sp.once.Do(func() {
		close(sp.done)
		sp.cancel()
		if sp.pending != nil {
			sp.pending.reply <- callOutcome{err: err}
		}
	})
}

// modernRequest is what runModern needs of a request that may ask the
// client for input: tools/call, prompts/get, resources/read.
type modernRequest struct {
	what      string // method and name: a retry must be of the same
	state     string
	responses mcp.InputResponseMap
	caps      *mcp.ClientCapabilities
}

// runModern runs run for a modern client on its own goroutine, so that
// what its upstream asks of the client can be answered input_required in
// the meantime; with a requestState of the hub's it continues the
// suspended run instead.
func (s *Session) runModern(ctx context.Context, r modernRequest, run func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	if strings.HasPrefix(r.state, statePrefix) {
		sp, err := s.hub.suspended.take(r.state, s, r.what)
		if err != nil {
			return nil, err
		}
		s.traceContinued(ctx, sp.first)
		if sp.pending != nil {
			answer, ok := r.responses[sp.key()].(mcp.Result)
			if !ok || answer == nil {
				// Asked again: the client did not answer.
				return s.hub.suspended.suspend(ctx, sp)
			}
			a := sp.pending
			sp.pending = nil
			a.reply <- callOutcome{res: answer}
		}
		return s.hub.suspended.wait(ctx, sp)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sp := &suspension{
		session:   s,
		principal: s.who().Key(),
		first:     ctx,
		tool:      r.what,
		caps:      r.caps,
		cancel:    cancel,
		result:    make(chan callOutcome, 1),
		asks:      make(chan *inputAsk),
		done:      make(chan struct{}),
	}
	runCtx = context.WithValue(runCtx, suspensionKey{}, sp)
	go func() {
		res, err := run(runCtx)
		sp.result <- callOutcome{res, err}
	}()
	return s.hub.suspended.wait(ctx, sp)
}

// wait waits for sp's call to end or to ask for input the client can
// give, or for the client's request to be cancelled (which abandons the
// call). A request for input the client did not declare the capability of
// is refused to the upstream, as a legacy session's would be, and the call
// goes on.
func (ss *suspensions) wait(ctx context.Context, sp *suspension) (mcp.Result, error) {
	for {
		select {
		case out := <-sp.result:
			sp.end(nil)
			if out.err != nil {
				return nil, out.err
			}
			return modernResult(out.res), nil
		case a := <-sp.asks:
			if missing := sp.lacks(a.method); missing != nil {
				data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: missing})
				a.reply <- callOutcome{err: &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
					Message: fmt.Sprintf("the client did not declare the capability %s needs", a.method), Data: data}}
				continue
			}
			sp.pending = a
			sp.round++
			return ss.suspend(ctx, sp)
		case <-ctx.Done():
			sp.end(ctx.Err())
			return nil, ctx.Err()
		}
	}
}

// suspend answers the client input_required with sp's pending ask, and
// keeps sp for its retry.
func (ss *suspensions) suspend(ctx context.Context, sp *suspension) (mcp.Result, error) {
	total, share := sp.session.hub.Config().Protocol.WaitingLimits()
	ss.mu.Lock()
	var err error
	switch {
	case len(ss.m) >= total:
		err = fmt.Errorf("mcp-hub: %d calls are waiting for their clients' input already (protocol.max_waiting_calls); retry later", total)
	case ss.per[sp.principal] >= share:
		err = fmt.Errorf("mcp-hub: %d of your calls are waiting for your input already (protocol.max_waiting_calls_per_principal): answer or cancel one, then retry", share)
	}
	if err != nil {
		ss.mu.Unlock()
		sp.end(err)
		return errorResult("Error: " + err.Error()), nil
	}
	sp.state = statePrefix + rand.Text()
	ss.add(sp.state, sp)
	state := sp.state
	sp.timer = time.AfterFunc(suspendTimeout, func() {
		ss.mu.Lock()
		_, still := ss.remove(state)
		ss.mu.Unlock()
		if still {
			sp.end(fmt.Errorf("mcp-hub: the client did not answer within %s", suspendTimeout))
		}
	})
	ss.mu.Unlock()
	b, err := json.Marshal(struct {
		ResultType    string              `json:"resultType"`
		InputRequests mcp.InputRequestMap `json:"inputRequests"`
		RequestState  string              `json:"requestState"`
	}{"input_required", mcp.InputRequestMap{sp.key(): sp.pending.params}, state})
	if err != nil {
		sp.end(err)
		return nil, err
	}
	sp.session.traceInputRequired(ctx)
	return &upstream.RawResult{JSON: b}, nil
}

// closeAll ends every suspended call (the hub is closing).
func (ss *suspensions) closeAll() {
	ss.mu.Lock()
	all := ss.m
	ss.m, ss.per = nil, nil
	ss.mu.Unlock()
	for _, sp := range all {
		sp.timer.Stop()
		sp.end(fmt.Errorf("mcp-hub: closing"))
	}
}

// take removes the suspension of state for its retry by session s of
// the same tool.
func (ss *suspensions) take(state string, s *Session, tool string) (*suspension, error) {
	ss.mu.Lock()
	sp, ok := ss.m[state]
	if ok && (sp.session != s || sp.tool != tool) {
		ok = false // another caller's, or another tool's: not this call's to continue
	}
	if ok {
		ss.remove(state)
		sp.timer.Stop()
	}
	ss.mu.Unlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "invalid params: requestState names no call waiting for input here (it expired, was answered, or belongs to another replica): call the tool again"}
	}
	return sp, nil
}

// lacks returns the capability an upstream's request of method needs that
// the client did not declare on its call, or nil. Roots are not checked:
// the capability's absence cannot be told from an empty one.
func (sp *suspension) lacks(method string) *mcp.ClientCapabilities {
	if sp.caps == nil {
		return nil // nothing declared at all: no era _meta to go by
	}
	switch {
	case method == upstream.MethodCreateMessage && sp.caps.Sampling == nil:
		return &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
	case method == upstream.MethodElicit && sp.caps.Elicitation == nil:
		return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	}
	return nil
}

// key is the id of sp's pending ask in inputRequests: one per round, so a
// stale answer is not taken for the current question.
func (sp *suspension) key() string { return "input-" + strconv.Itoa(sp.round) }

// ask hands an upstream's request to the client through sp and waits for
// the answer.
func (sp *suspension) ask(ctx context.Context, method string, params mcp.InputRequest) (mcp.Result, error) {
	a := &inputAsk{method: method, params: params, reply: make(chan callOutcome, 1)}
	select {
	case sp.asks <- a:
	case <-sp.done:
		return nil, fmt.Errorf("mcp-hub: the client's call ended")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case out := <-a.reply:
		return out.res, out.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inputRequest turns an upstream's request into what an input_required
// result carries.
func inputRequest(method string, params mcp.Params) (mcp.InputRequest, error) {
	switch method {
	case upstream.MethodCreateMessage:
		return asSamplingParams(params), nil
	case upstream.MethodElicit:
		if p, ok := params.(*mcp.ElicitParams); ok {
			return p, nil
		}
	case upstream.MethodListRoots:
		p, _ := params.(*mcp.ListRootsParams)
		if p == nil {
			p = &mcp.ListRootsParams{}
		}
		return p, nil
	}
	return nil, fmt.Errorf("mcp-hub: unsupported request %s", method)
}

// modernResult marks a complete result for a modern client: every result
// of the era carries resultType. go-sdk sets it on the results of its own
// handlers, but the hub answers tools/call, prompts/get and resources/read
// before them (route), with an upstream's bytes or a typed result whose
// resultType only the SDK can set: those are sent as bytes with it added,
// unless they have it (a modern upstream's do).
func modernResult(res mcp.Result) mcp.Result {
	var b []byte
	switch r := res.(type) {
	case *upstream.RawResult:
		b = bytes.TrimSpace(r.JSON)
	case *mcp.CallToolResult, *mcp.GetPromptResult, *mcp.ReadResourceResult:
		var err error
		if b, err = json.Marshal(r); err != nil {
			return res
		}
	default:
		return res
	}
	if len(b) < 2 || b[0] != '{' || bytes.Contains(b, []byte(`"resultType"`)) {
		return res
	}
	out := make([]byte, 0, len(b)+25)
	out = append(out, `{"resultType":"complete"`...)
	if rest := bytes.TrimSpace(b[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, b[1:]...)
	return &upstream.RawResult{JSON: out}
}

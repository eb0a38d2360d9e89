package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// attribCallText calls a tool with cs and returns the result's text, or
// the error's.
func attribCallText(cs *mcp.ClientSession, p *mcp.CallToolParams) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return "call failed: " + err.Error()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "isError: " + b.String()
	}
	return b.String()
}

func attribText(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// attribHub is a hub serving both eras with the given in-process servers
// (builtin name = server name).
func attribHub(t *testing.T, servers map[string]func() *mcp.Server, protocol func(*config.Config)) (*Hub, *fixture.Log) {
	t.Helper()
	var ups []*config.Server
	for name := range servers {
		ups = append(ups, fixture.ServerEntry(name))
	}
	cfg := fixture.Config(ups...)
	on := true
	cfg.Protocol.Modern = &on
	if protocol != nil {
		protocol(cfg)
	}
	return agHub(t, cfg, Options{Builtin: fixture.Builtins(servers)})
}

// attribModernClient connects a 2026-07-28 client to s, a session made by
// NewModernSession, in memory: one of the clients its toolset and
// principal share it with. Its wire (what it reads) is recorded.
func attribModernClient(t *testing.T, s *Session, client *mcp.Client) (*mcp.ClientSession, *fixture.Wire) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Server().Connect(fixture.Context(t), st, nil); err != nil {
		t.Fatal(err)
	}
	wire := &fixture.Wire{}
	cs, err := client.Connect(fixture.Context(t), fixture.Recording(ct, wire), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != ModernProtocol {
		t.Fatalf("negotiated %q, want %s", v, ModernProtocol)
	}
	return cs, wire
}

// attribLegacyClient connects a client of the 2025-11-25 era to h in
// memory, in a session of its own. Its wire is recorded.
func attribLegacyClient(t *testing.T, h *Hub, client *mcp.Client) (*mcp.ClientSession, *fixture.Wire) {
	t.Helper()
	wire := &fixture.Wire{}
	cs, err := client.Connect(fixture.Context(t), fixture.Recording(agSessionTransport(t, h), wire), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, wire
}

func attribModernSession(t *testing.T, h *Hub, who string) *Session {
	t.Helper()
	s, err := h.NewModernSession(SessionOptions{Principal: &Principal{ID: "token:" + who, Name: who, Kind: PrincipalToken}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.End)
	return s
}

// attribCall is a tools/call params that asks for every log line.
func attribCall(name string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}}
}

// TestAttributionWhileWaiting: a modern call waiting for its client's
// answer is in flight. While alice's call waits for her sampling answer,
// her upstream (one process shared by everyone) logs and sends an
// elicitation: with another client calling the same upstream (of another
// principal, of alice's own principal, or a legacy session), neither
// reaches that client; the elicitation is refused and the logs dropped.
// Alone, alice gets both requests, one round each, and her logs.
func TestAttributionWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other string // "", "principal", "same principal", "legacy"
	}{
		{"alone", ""},
		{"another principal", "principal"},
		{"another client of alice's principal", "same principal"},
		{"a legacy session", "legacy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := fixture.NewAskingServer()
			h, log := attribHub(t, map[string]func() *mcp.Server{"hostile": x.Server}, nil)
			// A legacy client asks for every log line of the upstream
			// (the upstream logs nothing until some client sets a level).
			setter := fixture.Client(t, h, nil)
			if err := setter.SetLoggingLevel(fixture.Context(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}

			aliceAsked := make(chan struct{}, 1)
			aliceAnswer := make(chan struct{})
			answer, release := sync.OnceFunc(func() { close(aliceAnswer) }), sync.OnceFunc(func() { close(x.Release) })
			t.Cleanup(answer) // a failed test leaves nothing blocked (cleanups run last first)
			t.Cleanup(release)
			aliceSession := attribModernSession(t, h, "alice")
			alice, aliceWire := attribModernClient(t, aliceSession, mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					aliceAsked <- struct{}{}
					select {
					case <-aliceAnswer:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "alice-answer"}}, nil
				},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "alice"}}, nil
				},
			}))
			aliceDone := make(chan string, 1)
			go func() { aliceDone <- attribCallText(alice, attribCall("hostile__ask")) }()
			select {
			case <-aliceAsked: // alice's call now waits for her answer
			case <-time.After(30 * time.Second):
				t.Fatal("alice was never asked to sample")
			}

			otherAsked := make(chan string, 4)
			other := mcp.NewClient(&mcp.Implementation{Name: "other", Version: "0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					otherAsked <- "sampling"
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "other-answer"}}, nil
				},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					otherAsked <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "other"}}, nil
				},
			})
			var otherCS *mcp.ClientSession
			var otherWire *fixture.Wire
			switch tc.other {
			case "principal":
				otherCS, otherWire = attribModernClient(t, attribModernSession(t, h, "bob"), other)
			case "same principal":
				otherCS, otherWire = attribModernClient(t, aliceSession, other)
			case "legacy":
				otherCS, otherWire = attribLegacyClient(t, h, other)
				if err := otherCS.SetLoggingLevel(fixture.Context(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatal(err)
				}
			}
			otherDone := make(chan string, 1)
			if otherCS != nil {
				go func() { otherDone <- attribCallText(otherCS, attribCall("hostile__block")) }()
				select {
				case <-x.Blocked: // the other client's call is in flight
				case <-time.After(30 * time.Second):
					t.Fatal("the other client's call never reached the upstream")
				}
			}

			close(x.Proceed) // the upstream logs and elicits while alice's sampling waits
			if otherCS == nil {
				answer() // her elicitation is her next round
			}
			var elicit string
			select {
			case elicit = <-x.Elicited:
			case what := <-otherAsked:
				t.Fatalf("the other client was asked %q, sent by alice's upstream call", what)
			case <-time.After(30 * time.Second):
				t.Fatal("the upstream's elicitation never ended")
			}
			if otherCS == nil {
				if elicit != `accept {"answer":"alice"}` {
					t.Errorf("alone, alice's elicitation ended %q, want her answer", elicit)
				}
				if got := <-aliceDone; got != `sample=alice-answer; elicit=accept {"answer":"alice"}` {
					t.Errorf("alice's result = %q", got)
				}
				if w := aliceWire.String(); !strings.Contains(w, "alice-secret-log-2") {
					t.Errorf("alone, alice did not get her upstream's logs:\n%s", w)
				}
				return
			}
			if !strings.Contains(elicit, "cannot route") {
				t.Errorf("the unattributable elicitation ended %q, want a refusal", elicit)
			}
			log.WaitFor(t, "the hub to drop alice's log lines", 30*time.Second, func(s string) bool {
				return strings.Contains(s, "upstream log not forwarded") && strings.Contains(s, "alice-secret-log-2")
			})
			release()
			if got := <-otherDone; got != "released" {
				t.Errorf("the other client's call = %q, want its own result", got)
			}
			if w := otherWire.String(); strings.Contains(w, "alice") {
				t.Errorf("the other client read alice's messages:\n%s", w)
			}
			answer()
			if got := <-aliceDone; !strings.HasPrefix(got, "sample=alice-answer; elicit=error: ") || !strings.Contains(got, "cannot route") {
				t.Errorf("alice's result = %q", got)
			}
			if w := aliceWire.String(); strings.Contains(w, "other") {
				t.Errorf("alice read the other client's messages:\n%s", w)
			}
		})
	}
}

// TestAttributionLogOutsideCall: a log line a shared upstream sends
// outside any call reaches no session (it was broadcast to every legacy
// session): the hub logs it at debug on its own log instead. A line sent
// during a call still reaches the caller.
func TestAttributionLogOutsideCall(t *testing.T) {
	x := fixture.NewAskingServer()
	h, log := attribHub(t, map[string]func() *mcp.Server{"hostile": x.Server}, nil)
	a, aWire := attribLegacyClient(t, h, mcp.NewClient(&mcp.Implementation{Name: "a", Version: "0"}, nil))
	b, bWire := attribLegacyClient(t, h, mcp.NewClient(&mcp.Implementation{Name: "b", Version: "0"}, nil))
	for _, cs := range []*mcp.ClientSession{a, b} {
		if err := cs.SetLoggingLevel(fixture.Context(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	for ss := range x.Latest().Sessions() {
		if err := ss.Log(fixture.Context(t), &mcp.LoggingMessageParams{Level: "info", Data: "stray-log"}); err != nil {
			t.Fatal(err)
		}
	}
	// Delivered to a session, or dropped with a line on the hub's log.
	fixture.Eventually(t, 30*time.Second, "the stray line handled", func() bool {
		return strings.Contains(aWire.String()+bWire.String(), "stray-log") ||
			strings.Contains(log.String(), "upstream log not forwarded: sent outside any call")
	})
	for i, w := range []*fixture.Wire{aWire, bWire} {
		if got := w.String(); strings.Contains(got, "stray-log") {
			t.Errorf("session %d got a log line sent outside any call:\n%s", i, got)
		}
	}
	// A line logged during a session's call still reaches it.
	for i, cs := range []*mcp.ClientSession{a, b} {
		if got := attribCallText(cs, &mcp.CallToolParams{Name: "hostile__log", Arguments: map[string]any{"own": i}}); got != "logged" {
			t.Fatalf("log call -> %q", got)
		}
	}
	for i, w := range []*fixture.Wire{aWire, bWire} {
		if got := w.String(); !strings.Contains(got, fmt.Sprintf(`{\"own\":%d}`, i)) {
			t.Errorf("session %d did not get the line logged during its own call:\n%s", i, got)
		}
	}
}

// attribSampler is an upstream whose one tool, sample, asks its client's
// model and returns the answer.
func attribSampler() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "q"}}}})
			if err != nil {
				return nil, err
			}
			text, _ := res.Content.(*mcp.TextContent)
			return attribText("answer=" + text.Text), nil
		})
	return s
}

// TestWaitingCallsPerPrincipal: one principal's calls waiting for its
// input_required answers are bounded by its share
// (protocol.max_waiting_calls_per_principal), all of them by
// protocol.max_waiting_calls; past either only the call that would wait
// is refused, saying which limit, and an answered call frees its place.
// Each call goes to an upstream of its own: calls of several clients to
// one shared upstream could not be told apart.
func TestWaitingCallsPerPrincipal(t *testing.T) {
	servers := map[string]func() *mcp.Server{}
	for i := 1; i <= 6; i++ {
		servers[fmt.Sprintf("w%d", i)] = attribSampler
	}
	h, _ := attribHub(t, servers, func(cfg *config.Config) {
		cfg.Protocol.MaxWaitingCalls = 3
		cfg.Protocol.MaxWaitingCallsPerPrincipal = 2
	})
	client := func(who string) *mcp.ClientSession {
		cs, _ := attribModernClient(t, attribModernSession(t, h, who), mcp.NewClient(&mcp.Implementation{Name: who, Version: "0"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return nil, fmt.Errorf("answered by the test")
			},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		}))
		return cs
	}
	alice, bob, carol := client("alice"), client("bob"), client("carol")
	call := func(cs *mcp.ClientSession, p *mcp.CallToolParams) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(fixture.Context(t), p)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		return res
	}
	var waiting *mcp.CallToolResult
	for _, step := range []struct {
		cs      *mcp.ClientSession
		server  string
		refused string // "": waits for input
	}{
		{alice, "w1", ""},
		{alice, "w2", ""},
		{alice, "w3", "max_waiting_calls_per_principal"},
		{bob, "w4", ""},
		{carol, "w5", "protocol.max_waiting_calls)"},
	} {
		res := call(step.cs, &mcp.CallToolParams{Name: step.server + "__sample"})
		got := fixture.JSON(t, res)
		switch {
		case step.refused == "" && !res.NeedsInput():
			t.Fatalf("call to %s = %s, want input_required", step.server, got)
		case step.refused != "" && (!res.IsError || !strings.Contains(got, step.refused)):
			t.Fatalf("call to %s = %s, want refused naming %s", step.server, got, step.refused)
		}
		if step.server == "w1" {
			waiting = res
		}
	}
	// alice answers her first call: it completes, and frees a place.
	var key string
	for k := range waiting.InputRequests {
		key = k
	}
	res := call(alice, &mcp.CallToolParams{Name: "w1__sample", RequestState: waiting.RequestState,
		InputResponses: mcp.InputResponseMap{key: &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "four"}}}})
	if got := fixture.ResultText(res); got != "answer=four" {
		t.Fatalf("alice's answered call = %s", fixture.JSON(t, res))
	}
	if res := call(carol, &mcp.CallToolParams{Name: "w6__sample"}); !res.NeedsInput() {
		t.Fatalf("carol's call once a place is free = %s, want input_required", fixture.JSON(t, res))
	}
}

// attribModernUpstream is an upstream of the 2026-07-28 era: its tool ask
// asks for a sampling answer inside its result (input_required) and
// answers with it on the retry; hold stays in flight until release closes.
func attribModernUpstream(release <-chan struct{}, held chan<- struct{}) func() *mcp.Server {
	return func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "modern-up", Version: "0"}, nil)
		object := json.RawMessage(`{"type":"object"}`)
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if answer, ok := req.Params.InputResponses["q"]; ok && answer != nil {
				b, _ := json.Marshal(answer)
				return attribText("answer=" + string(b)), nil
			}
			return &mcp.CallToolResult{RequestState: "s", InputRequests: mcp.InputRequestMap{"q": &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "q"}}}}}}, nil
		})
		s.AddTool(&mcp.Tool{Name: "hold", InputSchema: object}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			held <- struct{}{}
			select {
			case <-release:
				return attribText("released"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		return s
	}
}

// TestAttributionModernUpstream: a 2026-07-28 upstream's input request
// comes back inside the call's own result: the hub hands it to that call,
// exactly, though another client of the same principal (sharing its hub
// session, and so its upstream owner) has a call in flight to the same
// upstream. Before, the request went to any call of that session in
// flight: as often as not the other client's.
func TestAttributionModernUpstream(t *testing.T) {
	const rounds = 8
	release, held := make(chan struct{}), make(chan struct{}, rounds)
	releaseAll := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseAll)
	cfg := fixture.Config(fixture.Entry("m", config.Upstream{Builtin: "m", ProtocolVersion: ModernProtocol}))
	on := true
	cfg.Protocol.Modern = &on
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"m": attribModernUpstream(release, held)})})
	shared := attribModernSession(t, h, "alice")
	client := func(who string, asked chan<- string) *mcp.ClientSession {
		cs, _ := attribModernClient(t, shared, mcp.NewClient(&mcp.Implementation{Name: who, Version: "0"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked <- who
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: who}}, nil
			},
		}))
		return cs
	}
	holderAsked, askerAsked := make(chan string, rounds), make(chan string, rounds)
	holder, asker := client("holder", holderAsked), client("asker", askerAsked)
	holderDone := make(chan string, rounds)
	for range rounds {
		go func() { holderDone <- attribCallText(holder, &mcp.CallToolParams{Name: "m__hold"}) }()
		<-held
		if got := attribCallText(asker, &mcp.CallToolParams{Name: "m__ask"}); !strings.Contains(got, `"text":"asker"`) {
			t.Errorf("the asking client's call = %q, want its own answer", got)
		}
	}
	releaseAll()
	for range rounds {
		if got := <-holderDone; got != "released" {
			t.Errorf("the holding client's call = %q, want its own result", got)
		}
	}
	if len(holderAsked) > 0 {
		t.Errorf("the holding client was asked the other client's question %d times", len(holderAsked))
	}
}

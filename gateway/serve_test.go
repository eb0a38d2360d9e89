package gateway

// Tests of serve.go: the hub behind the gateway's HTTP front, next to a
// session over the in-memory transport. Upstreams are real: in-process
// go-sdk servers (the Builtin hook), the stdio fixture subprocess
// (testdata/fixture, with -features: log, sample, elicit, roots, ...), the
// same fixture over streamable HTTP, and an SSE server. Helpers are
// prefixed "ag", as the hub's tests they came from; what does not need a
// Gateway is package fixture's (fixture.Config, fixture.Client, ...).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// agHub starts a gateway with the hub options opts; it is closed when the
// test ends.
func agHub(t *testing.T, cfg *config.Config, opts hub.Options) (*Gateway, *fixture.Log) {
	t.Helper()
	log := fixture.NewLog(t)
	opts.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.StartupWait == 0 {
		opts.StartupWait = 20 * time.Second
	}
	if opts.Builtin == nil {
		opts.Builtin = builtins(cfg, opts.Logger)
	}
	h, err := New(fixture.Context(t), cfg, Options{Hub: opts, OpenStore: openStore})
	if err != nil {
		t.Fatalf("gateway.New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h, log
}

// agHTTPClient connects a downstream client to h over streamable HTTP,
// through the gateway's HTTP handler.
func agHTTPClient(t *testing.T, h *Gateway, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, fixture.Legacy())
	if err != nil {
		t.Fatalf("connect to hub over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// agHealth is the status the gateway's /healthz gives h: degraded when a
// server that is not disabled is not ready.
func agHealth(h *Gateway) (status string, servers []upstream.Status) {
	status = "ok"
	for _, st := range h.hub.Upstreams() {
		if st.State != upstream.StateReady && st.State != upstream.StateDisabled {
			status = "degraded"
		}
		servers = append(servers, st)
	}
	return status, servers
}

// agFeatures starts a gateway with the feature fixture over stdio ("fx")
// and over streamable HTTP ("web").
func agFeatures(t *testing.T) (*Gateway, *fixture.Log) {
	t.Helper()
	webURL := fixture.StartHTTP(t, "-name", "web", "-features")
	cfg := fixture.Config(
		fixture.StdioEntry(t, "fx", "-features"),
		fixture.Entry("web", config.Upstream{URL: webURL}),
	)
	return agHub(t, cfg, hub.Options{})
}

// agBodyRecorder keeps every HTTP response body a client reads, so a test
// can check the order of events on a POST's SSE stream.
type agBodyRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	// bodies maps a request body to the response body read so far.
	bodies []*agBody
}

type agBody struct {
	request string
	mu      sync.Mutex
	resp    bytes.Buffer
}

func (b *agBody) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.resp.String()
}

func (r *agBodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &agBody{}
	if req.Body != nil {
		data, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(data))
		rec.request = string(data)
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, rec)
	r.mu.Unlock()
	resp.Body = &agTee{ReadCloser: resp.Body, rec: rec}
	return resp, nil
}

// responseTo returns the response body of the request containing marker.
func (r *agBodyRecorder) responseTo(marker string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		if strings.Contains(b.request, marker) {
			return b.String()
		}
	}
	return ""
}

type agTee struct {
	io.ReadCloser
	rec *agBody
}

func (t *agTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.rec.mu.Lock()
	t.rec.resp.Write(p[:n])
	t.rec.mu.Unlock()
	return n, err
}

// agSessionTransport opens a session of h (default options) on the
// in-memory transport and returns the client's end, for a client that
// h.hub.Connect does not fit (it pins the legacy era).
func agSessionTransport(t *testing.T, h *Gateway) mcp.Transport {
	t.Helper()
	s, err := h.hub.NewSession(hub.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Server().Connect(fixture.Context(t), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Watch(ss, nil)
	return ct
}

// TestAggregateMixedTransports aggregates four servers over every transport
// (in-process, stdio subprocess, streamable HTTP, SSE) into one tools/list,
// namespaced <server>__<tool>, and routes each call to its server.
func TestAggregateMixedTransports(t *testing.T) {
	t.Parallel()
	httpURL := fixture.ServeHTTP(t, fixture.EchoServer("web", "fetch", "echo"))
	sseURL := fixture.ServeSSE(t, fixture.EchoServer("old", "echo"))
	cfg := fixture.Config(
		fixture.ServerEntry("mem"),
		fixture.StdioEntry(t, "proc", "-tools", "echo,alpha"),
		fixture.Entry("web", config.Upstream{URL: httpURL}),
		fixture.Entry("old", config.Upstream{URL: sseURL, Transport: config.TransportSSE}),
	)
	h, _ := agHub(t, cfg, hub.Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{
		"mem": func() *mcp.Server { return fixture.EchoServer("mem", "echo") },
	})})
	for _, st := range h.hub.Upstreams() {
		if st.State != upstream.StateReady {
			t.Errorf("server %s: state %s (%s), want ready", st.Name, st.State, st.LastError)
		}
	}
	cs := fixture.Client(t, h.hub, nil)
	want := []string{"mem__echo", "old__echo", "proc__alpha", "proc__echo", "web__echo", "web__fetch"}
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	for name, text := range map[string]string{
		"mem__echo":   `mem:echo:{"n":1}`,
		"proc__echo":  `proc:echo:{"n":1}`,
		"proc__alpha": `proc:alpha:{"n":1}`,
		"web__fetch":  `web:fetch:{"n":1}`,
		"old__echo":   `old:echo:{"n":1}`,
	} {
		if got := fixture.ResultText(fixture.CallTool(t, cs, name, map[string]any{"n": 1})); got != text {
			t.Errorf("%s -> %q, want %q", name, got, text)
		}
	}
	// The same tools, over the hub's own HTTP transport.
	hcs := agHTTPClient(t, h, mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "0"}, nil))
	if got := fixture.SortedToolNames(t, hcs); !slices.Equal(got, want) {
		t.Fatalf("tools/list over HTTP = %v, want %v", got, want)
	}
	if got := fixture.ResultText(fixture.CallTool(t, hcs, "old__echo", nil)); got != "old:echo:{}" {
		t.Errorf("old__echo over HTTP -> %q", got)
	}
	if tools := h.hub.Catalog().Tools; len(tools) != len(want) {
		t.Errorf("catalog has %d tools, want %d", len(tools), len(want))
	}
	if status, servers := agHealth(h); status != "ok" || len(servers) != 4 {
		t.Errorf("health = %s %+v", status, servers)
	}
}

// TestPassthroughPing: the hub answers ping on every transport.
func TestPassthroughPing(t *testing.T) {
	h, _ := agFeatures(t)
	for _, cs := range []*mcp.ClientSession{
		fixture.Client(t, h.hub, nil),
		agHTTPClient(t, h, mcp.NewClient(&mcp.Implementation{Name: "p", Version: "0"}, nil)),
	} {
		if err := cs.Ping(fixture.Context(t), nil); err != nil {
			t.Errorf("ping: %v", err)
		}
	}
}

// TestPassthroughServerRequests: sampling/createMessage, elicitation/create
// and roots/list sent by an upstream during a call are answered by the
// downstream client whose call caused them, for stdio and HTTP upstreams
// and in-memory and HTTP downstream sessions.
func TestPassthroughServerRequests(t *testing.T) {
	h, _ := agFeatures(t)
	newClient := func(who string) *mcp.Client {
		c := mcp.NewClient(&mcp.Implementation{Name: who, Version: "0"}, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				prompt := ""
				if len(req.Params.Messages) > 0 {
					if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
						prompt = tc.Text
					}
				}
				return &mcp.CreateMessageResult{Model: who + "-model", Role: "assistant",
					Content: &mcp.TextContent{Text: who + " answers " + prompt}}, nil
			},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": who + ":" + req.Params.Message}}, nil
			},
		})
		c.AddRoots(&mcp.Root{URI: "file:///home/" + who, Name: who})
		return c
	}
	sessions := map[string]*mcp.ClientSession{
		"alice": fixture.ClientWith(t, h.hub, newClient("alice")),
		"bob":   agHTTPClient(t, h, newClient("bob")),
	}
	for _, server := range []string{"fx", "web"} {
		for who, cs := range sessions {
			if got := fixture.ResultText(fixture.CallTool(t, cs, server+"__sample", map[string]any{"prompt": "2+2?"})); got != who+" answers 2+2?" {
				t.Errorf("%s sample via %s -> %q", who, server, got)
			}
			res := fixture.CallTool(t, cs, server+"__elicit", map[string]any{"message": "name?"})
			if got := fixture.ResultText(res); got != `action=accept content={"answer":"`+who+`:name?"}` {
				t.Errorf("%s elicit via %s -> %q", who, server, got)
			}
			if got := fixture.ResultText(fixture.CallTool(t, cs, server+"__roots", nil)); got != "file:///home/"+who {
				t.Errorf("%s roots via %s -> %q", who, server, got)
			}
		}
	}
	// A client without sampling support gets a clear error, not a hang.
	plain := fixture.Client(t, h.hub, nil)
	res, err := plain.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "fx__sample", Arguments: map[string]any{"prompt": "x"}})
	if err == nil && !res.IsError {
		t.Errorf("sample from a client without sampling -> %q", fixture.ResultText(res))
	}
}

// TestLeakyUpstreamRedacted: an upstream whose JSON-RPC errors quote its
// API key (set through env: {API_KEY: "${KEY}"}) never hands the key to a
// client: not in tools/call, resources/read or prompts/get, neither in the
// error's message nor in its data. The error's code stays.
func TestLeakyUpstreamRedacted(t *testing.T) {
	const key = "sk-leak-7d3f9a2c51e8b640"
	t.Setenv("HD_LEAK_KEY", key)
	cfg, err := config.Parse("hub.yaml", []byte(`
servers:
  leaky:
    command: `+fixture.Build(t)+`
    args: [-name, leaky, -hostile, -leak-env, API_KEY]
    env: {API_KEY: "${HD_LEAK_KEY}"}
`), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := secHub(t, cfg)
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	inMemory := connectClient(t, h, "")
	overHTTP, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"in memory": inMemory, "HTTP": overHTTP} {
		ctx := fixture.Context(t)
		calls := map[string]func() error{
			"tools/call": func() error {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "leaky__leak"})
				return err
			},
			"resources/read": func() error {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fixture://leak"})
				return err
			},
			"prompts/get": func() error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "leaky__leak"})
				return err
			},
		}
		for method, call := range calls {
			err := call()
			rpc, ok := errors.AsType[*jsonrpc.Error](err)
			if !ok {
				t.Errorf("%s %s: %v, want the upstream's JSON-RPC error", name, method, err)
				continue
			}
			if strings.Contains(rpc.Message, key) || strings.Contains(string(rpc.Data), key) || strings.Contains(err.Error(), key) {
				t.Errorf("%s %s leaks the key: %s %s", name, method, rpc.Message, rpc.Data)
			}
			if !strings.Contains(rpc.Message, redact.Redacted) || rpc.Code != -32001 {
				t.Errorf("%s %s: code %d message %q, want -32001 with the key redacted", name, method, rpc.Code, rpc.Message)
			}
		}
	}
}

// TestPassthroughLogging: logging/setLevel reaches the upstreams, and a log
// message sent during a call arrives before the call's response, over the
// in-memory and HTTP downstream transports, from stdio and HTTP upstreams.
func TestPassthroughLogging(t *testing.T) {
	h, _ := agFeatures(t)
	ctx := fixture.Context(t)

	var got atomic.Int64
	logs := func(context.Context, *mcp.LoggingMessageRequest) { got.Add(1) }
	mem, wire := fixture.RecordedClient(t, agSessionTransport(t, h), &mcp.ClientOptions{LoggingMessageHandler: logs}, fixture.Legacy())
	rec := &agBodyRecorder{base: http.DefaultTransport}
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	hc, err := mcp.NewClient(&mcp.Implementation{Name: "http", Version: "0"}, &mcp.ClientOptions{LoggingMessageHandler: logs}).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })

	for _, cs := range []*mcp.ClientSession{mem, hc} {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatalf("setLevel: %v", err)
		}
	}
	n := 0
	for round := range 5 {
		for _, server := range []string{"fx", "web"} {
			for i, cs := range []*mcp.ClientSession{mem, hc} {
				n++
				msg := "message-" + strings.Repeat("x", round) + server + string(rune('A'+i))
				res := fixture.CallTool(t, cs, server+"__log", map[string]any{"level": "debug", "message": msg})
				if fixture.ResultText(res) != "logged" {
					t.Fatalf("log tool -> %q", fixture.ResultText(res))
				}
				var stream string
				if cs == mem {
					stream = wire.String()
				} else {
					stream = rec.responseTo(msg)
				}
				li := strings.Index(stream, `"data":"`+msg+`"`)
				ri := strings.Index(stream[max(li, 0):], `"text":"logged"`)
				if li < 0 || ri < 0 {
					t.Fatalf("%s via %s: log message not before the response on the wire:\n%s", msg, server, stream)
				}
			}
		}
	}
	// The go-sdk client runs notification handlers asynchronously.
	fixture.Eventually(t, 30*time.Second, "the client to handle every log message", func() bool { return got.Load() == int64(n) })
	// setLevel is forwarded: at "error", the upstream sends no info message.
	if err := mem.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	before := wire.String()
	fixture.CallTool(t, mem, "fx__log", map[string]any{"level": "info", "message": "filtered-out"})
	// An error-level message after it, which must arrive: anything of the
	// first call would be on the wire before it.
	fixture.CallTool(t, mem, "fx__log", map[string]any{"level": "error", "message": "passes-the-filter"})
	after := wire.String()[len(before):]
	if !strings.Contains(after, "passes-the-filter") || strings.Contains(after, "filtered-out") {
		t.Errorf("at level error: want only the error message on the wire:\n%s", after)
	}
}

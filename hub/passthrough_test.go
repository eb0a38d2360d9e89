package hub

// Pass-through tests: what a client gets through the hub is what it would
// get from the upstream directly. Upstreams are real: the stdio fixture
// with -features (sleep, log, progress, sample, elicit, roots, touch,
// resources, a prompt and completions), the same fixture over streamable
// HTTP, and in-process go-sdk servers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// agContentServer has a tool returning content of every type with
// structuredContent and _meta, a tool returning isError, and a tool that
// blocks until cancelled (reporting start and cancellation on channels).
type agContentServer struct {
	started   chan struct{}
	cancelled chan struct{}
}

func newAgContentServer() *agContentServer {
	return &agContentServer{started: make(chan struct{}, 10), cancelled: make(chan struct{}, 10)}
}

func agAllContent() *mcp.CallToolResult {
	size := int64(5)
	return &mcp.CallToolResult{
		Meta: mcp.Meta{"vendor/trace": "abc"},
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hello", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5}},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			&mcp.AudioContent{Data: []byte("RIFF....WAVE"), MIMEType: "audio/wav", Meta: mcp.Meta{"len": 1}},
			&mcp.ResourceLink{URI: "file:///tmp/a.txt", Name: "a.txt", Title: "A", Description: "a file", MIMEType: "text/plain", Size: &size},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://doc", MIMEType: "text/markdown", Text: "# doc"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}},
		},
		StructuredContent: map[string]any{"count": 3, "items": []any{"a", map[string]any{"b": nil}}, "ok": true},
	}
}

func (c *agContentServer) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "content", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "all", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return agAllContent(), nil
	})
	s.AddTool(&mcp.Tool{Name: "broken", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}},
			StructuredContent: map[string]any{"code": 28}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "rpcerror", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32042, Message: "custom failure", Data: json.RawMessage(`{"why":"test"}`)}
	})
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c.started <- struct{}{}
		select {
		case <-ctx.Done():
			c.cancelled <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not cancelled"}}}, nil
		}
	})
	s.AddResource(&mcp.Resource{URI: "mem://doc", Name: "doc", MIMEType: "text/markdown", Title: "Doc", Size: 5,
		Annotations: &mcp.Annotations{Priority: 1}},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# doc"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "mem://bin", Name: "bin", MIMEType: "application/octet-stream"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}}}, nil
		})
	return s
}

// agDirect connects a client straight to an in-process server.
func agDirect(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(fixture.Context(t), st, nil); err != nil {
		t.Fatal(err)
	}
	// The hub speaks 2025-11-25 (see supportedVersions); compare like with like.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "0"}, nil).
		Connect(fixture.Context(t), ct, &mcp.ClientSessionOptions{ProtocolVersion: upstream.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPassthroughToolResults: content of every type, structuredContent,
// _meta and isError come back byte-for-byte as the upstream sent them,
// over in-memory and HTTP upstreams; a JSON-RPC error keeps its code.
func TestPassthroughToolResults(t *testing.T) {
	cserv := newAgContentServer()
	httpURL := fixture.ServeHTTP(t, newAgContentServer().server())
	cfg := fixture.Config(
		fixture.Entry("mem", config.Upstream{Builtin: "content"}),
		fixture.Entry("web", config.Upstream{URL: httpURL}),
	)
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"content": cserv.server})})
	cs := fixture.Client(t, h, nil)
	direct := agDirect(t, newAgContentServer().server())
	for _, tool := range []string{"all", "broken"} {
		want, err := direct.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: tool})
		if err != nil {
			t.Fatal(err)
		}
		for _, server := range []string{"mem", "web"} {
			got := fixture.CallTool(t, cs, server+"__"+tool, nil)
			fixture.SameJSON(t, server+"__"+tool+" result", got, want)
		}
	}
	// The wire form, not just the decoded one.
	fixture.SameJSON(t, "all (wire)", fixture.CallTool(t, cs, "mem__all", nil), json.RawMessage(fixture.JSON(t, agAllContent())))
	for _, server := range []string{"mem", "web"} {
		_, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: server + "__rpcerror"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32042 || rpcErr.Message != "custom failure" {
			t.Errorf("%s__rpcerror: %v, want the upstream's JSON-RPC error -32042", server, err)
		}
	}
}

// agFeatures starts a hub with the feature fixture over stdio ("fx") and
// over streamable HTTP ("web"), plus the in-process content server ("mem").
func agFeatures(t *testing.T) (*Hub, *fixture.Log, *agContentServer) {
	t.Helper()
	cfg, opts, cserv := agFeaturesConfig(t)
	h, log := agHub(t, cfg, opts)
	return h, log, cserv
}

// agFeaturesConfig is agFeatures' config, and the options whose Builtin
// serves its content server cserv.
func agFeaturesConfig(t *testing.T) (cfg *config.Config, opts Options, cserv *agContentServer) {
	t.Helper()
	cserv = newAgContentServer()
	webURL := fixture.StartHTTP(t, "-name", "web", "-features")
	cfg = fixture.Config(
		fixture.StdioEntry(t, "fx", "-features"),
		fixture.Entry("web", config.Upstream{URL: webURL}),
		fixture.Entry("mem", config.Upstream{Builtin: "content"}),
	)
	return cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"content": cserv.server})}, cserv
}

// TestPassthroughResources: list, templates and read are routed by URI to
// the server that offers it; subscribe/unsubscribe reach the upstream and
// resources/updated comes back to subscribed sessions only.
func TestPassthroughResources(t *testing.T) {
	t.Parallel()
	h, _, _ := agFeatures(t)
	updates := make(chan string, 20)
	cs := fixture.Client(t, h, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updates <- req.Params.URI
	}})
	ctx := fixture.Context(t)
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
		if r.URI == "mem://doc" && (r.Title != "Doc" || r.Size != 5 || r.Annotations == nil) {
			t.Errorf("mem://doc listed as %+v", r)
		}
	}
	slices.Sort(uris)
	// Both fixtures list fixture://info: the first server owns it.
	if want := []string{"fixture://info", "fixture://info", "mem://bin", "mem://doc"}; !slices.Equal(uris, want) {
		t.Errorf("resources/list = %v, want %v", uris, want)
	}
	tres, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tres.ResourceTemplates) != 2 || tres.ResourceTemplates[0].URITemplate != "fixture://item/{id}" {
		t.Errorf("resources/templates/list = %s", fixture.JSON(t, tres))
	}
	for uri, want := range map[string]string{
		"fixture://item/7": "fx item 7",
		"mem://doc":        "# doc",
	} {
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("read %s: %v", uri, err)
			continue
		}
		if len(r.Contents) != 1 || r.Contents[0].Text != want || r.Contents[0].URI != uri {
			t.Errorf("read %s = %s", uri, fixture.JSON(t, r))
		}
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fixture://info"})
	if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, `"name":"fx"`) {
		t.Errorf("read fixture://info = %v %v", fixture.JSON(t, r), err)
	}
	r, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://bin"})
	if err != nil || len(r.Contents) != 1 || !bytes.Equal(r.Contents[0].Blob, []byte{0, 1, 2, 255}) {
		t.Errorf("read mem://bin = %v %v", fixture.JSON(t, r), err)
	}
	// Errors from the upstream keep their code.
	for _, uri := range []string{"fixture://item/missing", "nowhere://x"} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeResourceNotFound {
			t.Errorf("read %s: %v, want resource not found (%d)", uri, err, mcp.CodeResourceNotFound)
		} else if want := fmt.Sprintf(`{"uri":%q}`, uri); string(rpcErr.Data) != want {
			// data.uri: the upstream's as it wrote it, and the hub's own.
			t.Errorf("read %s: error data %s, want %s", uri, rpcErr.Data, want)
		}
	}
	// A URI over MaxResourceURIBytes is refused before any template is
	// matched against it (a 3 MiB one held a CPU for minutes).
	long := "fixture://item/" + strings.Repeat("9", 3<<20)
	for what, call := range map[string]func() error{
		"read":      func() error { _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: long}); return err },
		"subscribe": func() error { return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: long}) },
	} {
		var rpcErr *jsonrpc.Error
		if err := call(); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "over the limit") {
			t.Errorf("%s of a 3 MiB URI: %v, want invalid params naming the limit", what, err)
		}
	}

	// Subscriptions: a second session subscribes too; one unsubscribing
	// must not stop the other's updates.
	updates2 := make(chan string, 20)
	cs2 := fixture.Client(t, h, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updates2 <- req.Params.URI
	}})
	expect := func(ch chan string, uri string, want bool, who string) {
		t.Helper()
		timeout := 5 * time.Second
		if !want {
			timeout = 300 * time.Millisecond
		}
		select {
		case got := <-ch:
			if !want {
				t.Errorf("%s got resources/updated %s after unsubscribing", who, got)
			} else if got != uri {
				t.Errorf("%s got resources/updated %s, want %s", who, got, uri)
			}
		case <-time.After(timeout):
			if want {
				t.Errorf("%s got no resources/updated for %s", who, uri)
			}
		}
	}
	const item = "fixture://item/3"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: item}); err != nil {
		t.Fatal(err)
	}
	if err := cs2.Subscribe(ctx, &mcp.SubscribeParams{URI: item}); err != nil {
		t.Fatal(err)
	}
	fixture.CallTool(t, cs, "fx__touch", map[string]any{"uri": item})
	expect(updates, item, true, "session 1")
	expect(updates2, item, true, "session 2")
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: item}); err != nil {
		t.Fatal(err)
	}
	fixture.CallTool(t, cs, "fx__touch", map[string]any{"uri": item})
	expect(updates2, item, true, "session 2 (still subscribed)")
	expect(updates, item, false, "session 1")
	if err := cs2.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: item}); err != nil {
		t.Fatal(err)
	}
	fixture.CallTool(t, cs, "fx__touch", map[string]any{"uri": item})
	expect(updates2, item, false, "session 2")
}

// TestPassthroughPrompts: prompts are listed under namespaced names, get
// goes to the owner under the original name, and completion/complete is
// routed for prompts and resource templates.
func TestPassthroughPrompts(t *testing.T) {
	h, _, _ := agFeatures(t)
	cs := fixture.Client(t, h, nil)
	ctx := fixture.Context(t)
	res, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
		if len(p.Arguments) != 1 || p.Arguments[0].Name != "name" || !p.Arguments[0].Required || p.Description != "Greet someone by name" {
			t.Errorf("prompt %s = %s", p.Name, fixture.JSON(t, p))
		}
	}
	if want := []string{"fx__greet", "web__greet"}; !slices.Equal(names, want) {
		t.Fatalf("prompts/list = %v, want %v", names, want)
	}
	for _, server := range []string{"fx", "web"} {
		g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: server + "__greet", Arguments: map[string]string{"name": "Ann"}})
		if err != nil {
			t.Fatalf("prompts/get: %v", err)
		}
		want := `{"description":"greeting from ` + server + `","messages":[{"content":{"type":"text","text":"Hello, Ann!"},"role":"user"}]}`
		fixture.SameJSON(t, server+"__greet", g, json.RawMessage(want))
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err == nil || !strings.Contains(err.Error(), "greet") {
		t.Errorf("get of an unknown prompt: %v", err)
	}
	c, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "web__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "al"},
	})
	if err != nil || !slices.Equal(c.Completion.Values, []string{"alice", "albert"}) {
		t.Errorf("complete prompt = %v %v", fixture.JSON(t, c), err)
	}
	c, err = cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "fixture://item/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"},
	})
	if err != nil || !slices.Equal(c.Completion.Values, []string{"1", "10", "11", "12"}) || c.Completion.Total != 4 {
		t.Errorf("complete resource = %v %v", fixture.JSON(t, c), err)
	}
}

// TestPassthroughProgress: progress notifications carry the client's own
// token (string or number), arrive before the response, and two sessions
// using the same token each get only their own.
func TestPassthroughProgress(t *testing.T) {
	h, _, _ := agFeatures(t)
	type got struct {
		token    any
		progress float64
		message  string
	}
	var mu sync.Mutex
	seen := map[string][]got{}
	handler := func(who string) func(context.Context, *mcp.ProgressNotificationClientRequest) {
		return func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			seen[who] = append(seen[who], got{req.Params.ProgressToken, req.Params.Progress, req.Params.Message})
			mu.Unlock()
		}
	}
	a, wire := fixture.RecordedClient(t, agSessionTransport(t, h), &mcp.ClientOptions{ProgressNotificationHandler: handler("a")}, nil)
	b := fixture.Client(t, h, &mcp.ClientOptions{ProgressNotificationHandler: handler("b")})

	for _, token := range []any{"tok-1", 42} {
		for _, server := range []string{"fx", "web"} {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			var wg sync.WaitGroup
			for _, cs := range []*mcp.ClientSession{a, b} {
				wg.Go(func() {
					params := &mcp.CallToolParams{Name: server + "__progress", Arguments: map[string]any{"steps": 3}}
					params.SetProgressToken(token)
					res, err := cs.CallTool(fixture.Context(t), params)
					if err != nil || fixture.ResultText(res) != "progress done: 3 steps" {
						t.Errorf("progress call: %v %v", fixture.JSON(t, res), err)
					}
				})
			}
			wg.Wait()
			// The go-sdk client runs notification handlers asynchronously.
			fixture.Eventually(t, 30*time.Second, "every progress notification handled", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen["a"]) >= 3 && len(seen["b"]) >= 3
			})
			mu.Lock()
			for _, who := range []string{"a", "b"} {
				if len(seen[who]) != 3 {
					t.Errorf("%s via %s, token %v: %d notifications: %+v", who, server, token, len(seen[who]), seen[who])
					continue
				}
				for i, g := range seen[who] {
					if fixture.JSON(t, g.token) != fixture.JSON(t, token) || g.progress != float64(i+1) {
						t.Errorf("%s via %s: notification %d = %+v, want token %v", who, server, i, g, token)
					}
				}
			}
			mu.Unlock()
		}
	}
	// On the wire: the last progress notification precedes the response.
	w := wire.String()
	last := strings.LastIndex(w, `"message":"step 3 of 3"`)
	resp := strings.LastIndex(w, `"text":"progress done: 3 steps"`)
	if last < 0 || resp < last {
		t.Errorf("progress after the response on the wire:\n%s", w)
	}
	if strings.Contains(w, "mcp-hub-") {
		t.Errorf("the hub's own progress token leaked to the client:\n%s", w)
	}
}

// TestPassthroughCancellation: a client cancelling a call cancels it
// upstream, in-process and in a stdio subprocess.
func TestPassthroughCancellation(t *testing.T) {
	t.Parallel()
	h, log, cserv := agFeatures(t)
	cs := fixture.Client(t, h, nil)

	ctx, cancel := context.WithCancel(fixture.Context(t))
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mem__block"})
		errc <- err
	}()
	select {
	case <-cserv.started:
	case <-time.After(30 * time.Second):
		t.Fatal("block never started")
	}
	cancel()
	select {
	case <-cserv.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream did not see the cancellation")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v", err)
	}

	// The stdio fixture logs "sleep cancelled" on stderr, which the hub logs.
	ctx, cancel = context.WithTimeout(fixture.Context(t), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__sleep", Arguments: map[string]any{"ms": 20000}})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled sleep returned %v after %s", err, time.Since(start))
	}
	log.WaitFor(t, "the fixture to report the cancellation", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "sleep cancelled")
	})
	// The session is still usable.
	if got := fixture.ResultText(fixture.CallTool(t, cs, "fx__sleep", map[string]any{"ms": 1})); got != "slept" {
		t.Errorf("sleep after a cancel -> %q", got)
	}
}

// TestPassthroughServerRequestAmbiguous: while two sessions have calls in
// flight to the same shared upstream, a server-to-client request cannot be
// attributed and is refused with a clear error rather than sent to the
// wrong client.
func TestPassthroughServerRequestAmbiguous(t *testing.T) {
	h, _, _ := agFeatures(t)
	a := fixture.Client(t, h, nil)
	b := fixture.ClientWith(t, h, mcp.NewClient(&mcp.Implementation{Name: "b", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "b"}}, nil
		},
	}))
	stop := agCallInFlight(t, h, a, "fx")
	res, err := b.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "fx__sample", Arguments: map[string]any{"prompt": "x"}})
	if err == nil && !res.IsError {
		t.Fatalf("ambiguous sampling was answered: %q", fixture.ResultText(res))
	}
	msg := fixture.JSON(t, res)
	if err != nil {
		msg = err.Error()
	}
	if !strings.Contains(msg, "several clients") {
		t.Errorf("ambiguous sampling error = %s", msg)
	}
	stop()
}

// agCallInFlight starts a long call by cs to server's sleep tool and waits
// until the hub routes it; stop cancels it and waits for it to end.
func agCallInFlight(t *testing.T, h *Hub, cs *mcp.ClientSession, server string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(fixture.Context(t))
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__sleep", Arguments: map[string]any{"ms": 10000}})
	}()
	t.Cleanup(func() { cancel(); <-done })
	fixture.Eventually(t, 30*time.Second, "the call to "+server+" to be in flight", func() bool {
		c, _ := h.routes.callerOf(server)
		return c != nil
	})
	return func() { cancel(); <-done }
}

// TestPassthroughServerRequestOwnSession: an HTTP upstream runs each
// session's calls in a session of its own, so the case that is ambiguous
// with a shared stdio process is not: b's sampling request reaches b while
// a has a call in flight to the same server, and a's logs reach a only.
func TestPassthroughServerRequestOwnSession(t *testing.T) {
	h, _, _ := agFeatures(t)
	var aLogs, bLogs atomic.Int64
	a := fixture.Client(t, h, &mcp.ClientOptions{LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { aLogs.Add(1) }})
	b := fixture.ClientWith(t, h, mcp.NewClient(&mcp.Implementation{Name: "b", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "b"}}, nil
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { bLogs.Add(1) },
	}))
	for _, cs := range []*mcp.ClientSession{a, b} {
		if err := cs.SetLoggingLevel(fixture.Context(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	stop := agCallInFlight(t, h, a, "web")
	if got := fixture.ResultText(fixture.CallTool(t, b, "web__sample", map[string]any{"prompt": "x"})); got != "b" {
		t.Errorf("b's sampling while a calls the same HTTP upstream -> %q, want b's answer", got)
	}
	fixture.CallTool(t, a, "web__log", map[string]any{"level": "info", "message": "for a"})
	fixture.Eventually(t, 30*time.Second, "a's log", func() bool { return aLogs.Load() > 0 })
	time.Sleep(100 * time.Millisecond) // the absence of a message: no event to wait on
	if n := bLogs.Load(); n != 0 {
		t.Errorf("b received %d of a's log messages", n)
	}
	stop()
}

// TestResultBytesKept: a stdio upstream's tools/call result reaches the
// client byte for byte as the upstream wrote it. Decoded and re-encoded by
// the SDK, structuredContent would come out with its keys sorted, and the
// upstream's escaped "<" unescaped.
func TestResultBytesKept(t *testing.T) {
	// The fixture's verbatimStructured, as its go-sdk server escapes it.
	const structured = `{"zeta":1,"alpha":{"y":"\u003cb\u003e","x":[3,1,2]}}`
	h, _ := secHub(t, fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features")))
	s := secServeStdio(t, h)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	s.recv()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx__verbatim","arguments":{}}}`)
	got := s.recvRaw()
	want := `"structuredContent":` + structured
	if !bytes.Contains(got, []byte(want)) {
		t.Errorf("result changed on the way:\n got %s\nwant it to contain %s", got, want)
	}
	if !bytes.Contains(got, []byte(`"text":"verbatim \u003c\u0026\u003e"`)) {
		t.Errorf("text changed on the way: %s", got)
	}
}

package hub

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// reachHub is agFeatures' hub (fx over stdio, web over streamable HTTP,
// mem in process) with protocol.modern on and toolsets of every shape:
// only mem; fx by a list of one tool; web by an exclude list and mem.
func reachHub(t *testing.T) *Hub {
	t.Helper()
	cfg, opts, _ := agFeaturesConfig(t)
	on := true
	cfg.Protocol.Modern = &on
	cfg.Toolsets = map[string]*config.Toolset{
		"memonly": {Servers: map[string]*config.ToolSelection{"mem": {All: true}, "fx": {All: false}}},
		"fxlist":  {Servers: map[string]*config.ToolSelection{"fx": {Include: []string{"touch"}}}},
		"webmem":  {Servers: map[string]*config.ToolSelection{"web": {All: true, Exclude: []string{"sleep"}}, "mem": {All: true}}},
	}
	h, _ := agHub(t, cfg, opts)
	return h
}

// reachConnect connects a client of one era to a session of toolset ts,
// in memory or over stdio (ServeStdio, as serve --toolset runs it).
func reachConnect(t *testing.T, h *Hub, ts string, modern, stdio bool, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "reach-test", Version: "0"}, opts)
	var ct mcp.Transport
	switch {
	case stdio:
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- h.ServeStdio(ctx, ts, inR, outW) }()
		t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
		ct = &mcp.IOTransport{Reader: outR, Writer: inW}
	case !modern:
		cs, err := h.Connect(fixture.Context(t), ts, client)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	default:
		s, err := h.NewSession(SessionOptions{Toolset: ts})
		if err != nil {
			t.Fatal(err)
		}
		var st mcp.Transport
		ct, st = mcp.NewInMemoryTransports()
		if _, err := s.connect(fixture.Context(t), st); err != nil {
			t.Fatal(err)
		}
	}
	var opt *mcp.ClientSessionOptions
	if !modern {
		opt = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := client.Connect(fixture.Context(t), ct, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	want := "2025-11-25"
	if modern {
		want = ModernProtocol
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated %s, want %s", got, want)
	}
	return cs
}

// sameAnswer fails unless err, the answer to a request naming out (out of
// the session's reach), is the answer to the same request naming unknown
// (a name no server has), once each name is replaced by a placeholder.
func sameAnswer(t *testing.T, what string, err error, out string, errUnknown error, unknown string) {
	t.Helper()
	shape := func(err error, name string) string {
		if err == nil {
			return "no error"
		}
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) {
			return "not a JSON-RPC error: " + strings.ReplaceAll(err.Error(), name, "NAME")
		}
		return fixture.JSON(t, map[string]any{"code": rpc.Code,
			"message": strings.ReplaceAll(rpc.Message, name, "NAME"),
			"data":    strings.ReplaceAll(string(rpc.Data), name, "NAME")})
	}
	if got, want := shape(err, out), shape(errUnknown, unknown); got != want {
		t.Errorf("%s %s answered %s; %s (no such name) answered %s", what, out, got, unknown, want)
	}
}

// TestToolsetBoundsResourcesAndPrompts: a session's toolset bounds its
// resources, resource templates, prompts, completions and subscriptions as
// it bounds its tools, in both eras, in memory and over stdio, and for
// every shape of toolset entry: what a server out of reach offers is not
// listed, and asking for it by name gets the answer a name no server has
// gets. A server named by a list of tools is reached whole.
func TestToolsetBoundsResourcesAndPrompts(t *testing.T) {
	h := reachHub(t)
	full := fixture.Client(t, h, nil) // sends fx's resources/updated
	for _, tc := range []struct {
		toolset                  string
		resources, templates     []string
		prompts                  []string
		outURIs, outPrompts      []string
		outTemplate              string
		readable                 string // a URI it reaches, and a word of its text
		readableText             string
		subscribeOut, subscribed string // an out-of-reach URI whose owner sends updates
	}{
		{
			toolset: "memonly", resources: []string{"mem://bin", "mem://doc"},
			outURIs: []string{"fixture://info", "fixture://item/7"}, outPrompts: []string{"fx__greet", "web__greet"},
			outTemplate: "fixture://item/{id}", readable: "mem://doc", readableText: "# doc",
			subscribeOut: "fixture://item/3",
		},
		{
			toolset: "fxlist", resources: []string{"fixture://info"}, templates: []string{"fixture://item/{id}"},
			prompts: []string{"fx__greet"}, outURIs: []string{"mem://doc"}, outPrompts: []string{"web__greet"},
			readable: "fixture://info", readableText: `"name":"fx"`,
		},
		{
			toolset: "webmem", resources: []string{"fixture://info", "mem://bin", "mem://doc"}, templates: []string{"fixture://item/{id}"},
			prompts: []string{"web__greet"}, outPrompts: []string{"fx__greet"},
			// fixture://info is listed by fx first, and by web too: web's answers.
			readable: "fixture://info", readableText: `"name":"web"`,
		},
	} {
		for _, way := range []struct {
			name          string
			modern, stdio bool
		}{{"legacy", false, false}, {"modern", true, false}, {"legacy-stdio", false, true}, {"modern-stdio", true, true}} {
			modern := way.modern
			t.Run(tc.toolset+"/"+way.name, func(t *testing.T) {
				ctx := fixture.Context(t)
				updates := make(chan string, 10)
				cs := reachConnect(t, h, tc.toolset, modern, way.stdio, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				}})
				res, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				slices.Sort(uris)
				if !slices.Equal(uris, tc.resources) {
					t.Errorf("resources/list = %v, want %v", uris, tc.resources)
				}
				tres, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var templates []string
				for _, r := range tres.ResourceTemplates {
					templates = append(templates, r.URITemplate)
				}
				if !slices.Equal(slices.Compact(templates), tc.templates) {
					t.Errorf("resources/templates/list = %v, want %v", templates, tc.templates)
				}
				pres, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var prompts []string
				for _, p := range pres.Prompts {
					prompts = append(prompts, p.Name)
				}
				if !slices.Equal(prompts, tc.prompts) {
					t.Errorf("prompts/list = %v, want %v", prompts, tc.prompts)
				}
				r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.readable})
				if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, tc.readableText) {
					t.Errorf("read %s = %s, %v; want %q in it", tc.readable, fixture.JSON(t, r), err, tc.readableText)
				}

				for _, uri := range tc.outURIs {
					unknown := "nowhere" + uri[strings.Index(uri, ":"):]
					_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					_, errUnknown := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: unknown})
					sameAnswer(t, "resources/read", err, uri, errUnknown, unknown)
				}
				for _, name := range tc.outPrompts {
					unknown := "nosuch__greet"
					_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: map[string]string{"name": "Ann"}})
					_, errUnknown := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: unknown, Arguments: map[string]string{"name": "Ann"}})
					sameAnswer(t, "prompts/get", err, name, errUnknown, unknown)
					complete := func(name string) error {
						_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: name},
							Argument: mcp.CompleteParamsArgument{Name: "name", Value: "al"}})
						return err
					}
					sameAnswer(t, "completion/complete of prompt", complete(name), name, complete(unknown), unknown)
				}
				if tc.outTemplate != "" {
					complete := func(uri string) error {
						_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: uri},
							Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}})
						return err
					}
					unknown := "nowhere://item/{id}"
					sameAnswer(t, "completion/complete of template", complete(tc.outTemplate), tc.outTemplate, complete(unknown), unknown)
				}
				if tc.subscribeOut != "" {
					unknown := "nowhere://item/3"
					err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: tc.subscribeOut})
					errUnknown := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: unknown})
					sameAnswer(t, "subscribe", err, tc.subscribeOut, errUnknown, unknown)
					// Subscribed (to the one server it reaches, as an
					// unknown URI is), it never hears of fx's updates.
					// A session that reaches fx subscribes too and touches
					// the URI twice: fx sends its notifications in order,
					// so once the second has reached the full session the
					// first has been handed to every session, and the
					// ping's answer comes after anything sent before it.
					fullUpdates := make(chan string, 10)
					other := fixture.Client(t, h, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
						fullUpdates <- req.Params.URI
					}})
					if err := other.Subscribe(ctx, &mcp.SubscribeParams{URI: tc.subscribeOut}); err != nil {
						t.Fatal(err)
					}
					for range 2 {
						fixture.CallTool(t, full, "fx__touch", map[string]any{"uri": tc.subscribeOut})
						select {
						case <-fullUpdates:
						case <-ctx.Done():
							t.Fatal("the session that reaches fx got no resources/updated")
						}
					}
					if _, err := cs.ListResources(ctx, nil); err != nil {
						t.Fatal(err)
					}
					select {
					case uri := <-updates:
						t.Errorf("got resources/updated %s from a server out of its toolset", uri)
					default:
					}
				}
			})
		}
	}
}

// TestToolsetBoundsListChanged: prompts/list_changed for a server out of a
// session's toolset does not reach the session. Server a (out of reach)
// adds a prompt, then, once a session of every server has heard of it,
// server b (in reach) adds one: the toolset's session hears of b's alone.
func TestToolsetBoundsListChanged(t *testing.T) {
	servers := map[string]*mcp.Server{}
	var mu sync.Mutex
	builtin := func(name string) func() *mcp.Server {
		return func() *mcp.Server {
			s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "0"}, &mcp.ServerOptions{
				Capabilities: &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{ListChanged: true}}})
			mu.Lock()
			servers[name] = s
			mu.Unlock()
			return s
		}
	}
	cfg := fixture.Config(fixture.ServerEntry("a"), fixture.ServerEntry("b"))
	cfg.Toolsets = map[string]*config.Toolset{"bonly": {Servers: map[string]*config.ToolSelection{"b": {All: true}}}}
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"a": builtin("a"), "b": builtin("b")})})
	var heard atomic.Int32 // by the session of toolset bonly
	changed := func(count *atomic.Int32) (chan struct{}, *mcp.ClientOptions) {
		ch := make(chan struct{}, 10)
		return ch, &mcp.ClientOptions{PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			if count != nil {
				count.Add(1)
			}
			ch <- struct{}{}
		}}
	}
	allChanged, allOpts := changed(nil)
	all := reachConnect(t, h, "", false, false, allOpts)
	bChanged, bOpts := changed(&heard)
	bonly := reachConnect(t, h, "bonly", false, false, bOpts)
	ctx := fixture.Context(t)
	waitPrompt := func(cs *mcp.ClientSession, ch chan struct{}, name string) {
		t.Helper()
		for {
			select {
			case <-ch:
			case <-ctx.Done():
				t.Fatalf("no prompts/list_changed listing %s", name)
			}
			res, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Prompts {
				if p.Name == name {
					return
				}
			}
		}
	}
	mu.Lock()
	a, b := servers["a"], servers["b"]
	mu.Unlock()
	a.AddPrompt(&mcp.Prompt{Name: "pa"}, nil)
	waitPrompt(all, allChanged, "a__pa")
	b.AddPrompt(&mcp.Prompt{Name: "pb"}, nil)
	waitPrompt(bonly, bChanged, "b__pb")
	if n := heard.Load(); n != 1 {
		t.Errorf("the session of toolset bonly heard of %d prompt list changes, want b's alone", n)
	}
}

// TestSubscriptionsPerPrincipal: max_subscriptions_per_principal bounds a
// legacy session's resources/subscribe too: past it that subscribe fails
// naming the key, and an unsubscribe frees a place.
func TestSubscriptionsPerPrincipal(t *testing.T) {
	cfg := fixture.Config(fixture.Entry("mem", config.Upstream{Builtin: "content"}))
	cfg.MaxSubscriptionsPerPrincipal = 2
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"content": newAgContentServer().server})})
	cs := reachConnect(t, h, "", false, true, nil)
	ctx := fixture.Context(t)
	for _, uri := range []string{"mem://doc", "mem://bin"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://third"}); err == nil || !strings.Contains(err.Error(), "max_subscriptions_per_principal") {
		t.Fatalf("a third subscription with max_subscriptions_per_principal 2: %v, want an error naming the key", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://doc"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://third"}); err != nil {
		t.Fatalf("a subscription after an unsubscribe: %v", err)
	}
}

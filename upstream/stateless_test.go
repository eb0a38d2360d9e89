package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestHopMeta: the _meta keys of the stateless revision describe one hop;
// what a downstream client put there never reaches a server, and a
// stateless server gets the level its caller set.
func TestHopMeta(t *testing.T) {
	down := mcp.Meta{
		metaProtocolVersion:    "2026-07-28",
		metaClientInfo:         map[string]any{"name": "downstream"},
		metaClientCapabilities: map[string]any{},
		"progressToken":        "mcp-hub-1",
	}
	cases := []struct {
		name      string
		meta      mcp.Meta
		wantKeys  []string
		wantLevel mcp.LoggingLevel
		stripped  bool
	}{
		{"nil", nil, nil, "", false},
		{"plain", mcp.Meta{"progressToken": 1}, []string{"progressToken"}, "", false},
		{"downstream hop", down, []string{"progressToken"}, "", true},
		{"level only", mcp.Meta{metaLogLevel: "debug"}, nil, "debug", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.meta)
			out, level, stripped := hopMeta(tc.meta)
			var keys []string
			for k := range out {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tc.wantKeys) || level != tc.wantLevel || stripped != tc.stripped {
				t.Errorf("hopMeta = %v, %q, %v; want keys %v, %q, %v", keys, level, stripped, tc.wantKeys, tc.wantLevel, tc.stripped)
			}
			if fmt.Sprint(tc.meta) != before {
				t.Errorf("hopMeta changed its argument: %v", tc.meta)
			}
		})
	}
}

// TestSessionOptions: which revision a connection asks for, by transport
// and protocol_version; a stdio server that refused initialize is asked
// with server/discover next, one that crashed is not.
func TestSessionOptions(t *testing.T) {
	refused := fmt.Errorf("calling %q: %w", "initialize", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"})
	cases := []struct {
		name   string
		cfg    config.Upstream
		failed []error // connect failures before asking
		want   string
	}{
		{"streamable HTTP", config.Upstream{URL: "http://127.0.0.1:1/mcp"}, nil, StatelessProtocolVersion},
		{"stdio", config.Upstream{Command: "srv"}, nil, ProtocolVersion},
		{"stdio after a refused initialize", config.Upstream{Command: "srv"}, []error{refused}, StatelessProtocolVersion},
		{"stdio after a crash", config.Upstream{Command: "srv"}, []error{io.EOF}, ProtocolVersion},
		{"stdio after two refusals", config.Upstream{Command: "srv"}, []error{refused, refused}, ProtocolVersion},
		{"stdio, stateless asked for", config.Upstream{Command: "srv", ProtocolVersion: StatelessProtocolVersion}, nil, StatelessProtocolVersion},
		{"HTTP pinned", config.Upstream{URL: "http://127.0.0.1:1/mcp", ProtocolVersion: "2025-06-18"}, []error{refused}, "2025-06-18"},
		{"HTTP after a refusal", config.Upstream{URL: "http://127.0.0.1:1/mcp"}, []error{refused}, StatelessProtocolVersion},
		{"SSE", config.Upstream{URL: "http://127.0.0.1:1/sse", Transport: config.TransportSSE}, nil, ProtocolVersion},
		{"builtin", config.Upstream{Builtin: "time"}, nil, ProtocolVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := New(tc.cfg, newTestListener(), Options{})
			for _, err := range tc.failed {
				u.connectFailed(err)
			}
			if got := u.sessionOptions().ProtocolVersion; got != tc.want {
				t.Errorf("asks for %q, want %q", got, tc.want)
			}
		})
	}
}

// askingListener answers elicitations with {"ok": true} and records whose
// context they came in.
type askingListener struct {
	*testListener
	mu     sync.Mutex
	owners []any
}

func (l *askingListener) UpstreamRequest(ctx context.Context, u *Upstream, method string, p mcp.Params) (mcp.Result, error) {
	l.mu.Lock()
	l.owners = append(l.owners, Owner(ctx))
	l.mu.Unlock()
	if method == MethodElicit {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
	}
	return l.testListener.UpstreamRequest(ctx, u, method, p)
}

// addStatelessTools gives s tools that show what a call carried, and ask
// for input: once, forever, too much at once, or with nothing to ask (a
// busy server).
func addStatelessTools(s *mcp.Server) {
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	schema := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "meta", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(req.Params.Meta)
		return text(string(b)), nil
	})
	ask := &mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}
	s.AddTool(&mcp.Tool{Name: "ask_once", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult); ok {
			return text(fmt.Sprintf("answered %s %v", r.Action, r.Content)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": ask}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "ask_forever", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": ask}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "ask_too_much", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		many := mcp.InputRequestMap{}
		for i := range MaxInputRequests + 1 {
			many[fmt.Sprint("q", i)] = ask
		}
		return &mcp.CallToolResult{InputRequests: many}, nil
	})
	s.AddTool(&mcp.Tool{Name: "busy", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}}, nil
	})
}

// TestStatelessServer: a stateless streamable HTTP server is reached in
// the 2026-07-28 revision: each call carries the hub's own _meta and its
// caller's log level, input_required rounds are answered for the caller
// and bounded, and list changes keep arriving on subscriptions/listen
// after the connections drop.
func TestStatelessServer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	addStatelessTools(s)
	s.AddResource(&mcp.Resource{URI: "test://watched", Name: "watched"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close) // after the upstream closes: Close waits for open streams
	l := &askingListener{testListener: newTestListener()}
	logs := &fixture.Log{}
	u := New(config.Upstream{Name: "modern", URL: srv.URL, Timeout: config.Duration(10 * time.Second)}, l, Options{
		Logger: slog.New(slog.NewTextHandler(logs, nil)), InitialBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	u.Start(context.Background())
	t.Cleanup(func() {
		u.Close()
		if t.Failed() {
			t.Logf("upstream log:\n%s", logs.String())
		}
	})
	waitReady(t, u)
	if got, st := u.ProtocolVersion(), u.Status().ProtocolVersion; got != StatelessProtocolVersion || st != got {
		t.Fatalf("negotiated %q (status %q), want %s", got, st, StatelessProtocolVersion)
	}
	ctx := ctxT(t)

	t.Run("meta", func(t *testing.T) {
		if err := u.SetLoggingLevel(ctx, "A", &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatalf("SetLoggingLevel on a stateless server: %v", err)
		}
		in := &mcp.CallToolParams{Name: "meta", Meta: mcp.Meta{
			metaProtocolVersion: "1999-01-01", metaClientInfo: map[string]any{"name": "downstream"}, "custom": "kept"}}
		res, err := u.CallTool(ctx, "A", in)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(fixture.Result(t, res).Content[0].(*mcp.TextContent).Text), &got); err != nil {
			t.Fatal(err)
		}
		info, _ := got[metaClientInfo].(map[string]any)
		if got[metaProtocolVersion] != StatelessProtocolVersion || info["name"] != "mcp-hub" || got[metaLogLevel] != "warning" || got["custom"] != "kept" {
			t.Errorf("the server got _meta %v", got)
		}
		if in.Meta[metaProtocolVersion] != "1999-01-01" || len(in.Meta) != 3 {
			t.Errorf("CallTool changed its caller's params: %v", in.Meta)
		}
	})
	cases := []struct {
		tool, owner string
		want        string // in the text, or in the error
		err         bool
	}{
		{"ask_once", "B", "answered accept map[ok:true]", false},
		{"ask_forever", "C", fmt.Sprintf("asked for input %d times", MaxInputRounds), true},
		{"busy", "D", "busy", true},
		{"ask_too_much", "E", fmt.Sprintf("asked for %d inputs at once", MaxInputRequests+1), true},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := u.CallTool(ctx, tc.owner, &mcp.CallToolParams{Name: tc.tool})
			switch {
			case tc.err && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			case !tc.err && err != nil:
				t.Errorf("error %v", err)
			case !tc.err && !strings.Contains(fixture.Result(t, res).Content[0].(*mcp.TextContent).Text, tc.want):
				t.Errorf("result %+v, want %q", fixture.Result(t, res).Content[0], tc.want)
			}
			l.mu.Lock()
			owners := slices.Clone(l.owners)
			l.owners = nil
			l.mu.Unlock()
			for _, o := range owners {
				if o != tc.owner {
					t.Errorf("an input request was answered for %v, want %s", o, tc.owner)
				}
			}
		})
	}

	t.Run("list changes and resource updates", func(t *testing.T) {
		updates := func() int {
			l.testListener.mu.Lock()
			defer l.testListener.mu.Unlock()
			n := 0
			for _, note := range l.notes {
				if strings.HasPrefix(note, NotifyResourceUpdated+" ") && strings.Contains(note, "test://watched") {
					n++
				}
			}
			return n
		}
		// An update is sent until one arrives: the subscription's stream
		// may still be opening.
		updated := func(want int) func() bool {
			return func() bool {
				s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://watched"})
				return updates() >= want
			}
		}
		if err := u.Subscribe(ctx, "test://watched"); err != nil {
			t.Fatal(err)
		}
		fixture.Eventually(t, 10*time.Second, "a resource update, through subscriptions/listen", updated(1))
		toolNames := func() []string { return names(u.Lists().Tools, func(x *mcp.Tool) string { return x.Name }) }
		add := func(name string) {
			s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		add("late")
		fixture.Eventually(t, 10*time.Second, "the new tool, through subscriptions/listen", func() bool { return slices.Contains(toolNames(), "late") })
		// The listen stream breaks: the hub must notice, and listen again.
		srv.CloseClientConnections()
		fixture.Eventually(t, 10*time.Second, "the upstream ready again", func() bool { return u.Status().State == StateReady })
		add("later")
		fixture.Eventually(t, 10*time.Second, "a tool added after the connections dropped", func() bool { return slices.Contains(toolNames(), "later") })
		fixture.Eventually(t, 10*time.Second, "a resource update after the connections dropped", updated(updates()+1))
	})
}

// TestHopMetaNotForwarded: what the hub forwards through the SDK as it
// came (a completion here) carries no _meta key of the downstream hop: a
// server of the older revision gets none (with one, a go-sdk server would
// take the request for a stateless one), a stateless one the hub's own.
func TestHopMetaNotForwarded(t *testing.T) {
	cases := []struct {
		name     string
		versions []string // the server's; nil: the SDK's, stateless included
		want     string   // protocol version the server sees in _meta
	}{
		{"2025-11-25 server", []string{"2025-11-25"}, ""},
		{"stateless server", nil, StatelessProtocolVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := make(chan mcp.Meta, 1)
			s := mcp.NewServer(&mcp.Implementation{Name: "complete", Version: "1"}, &mcp.ServerOptions{
				SupportedProtocolVersions: tc.versions,
				CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
					seen <- req.Params.Meta
					return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}}}, nil
				},
			})
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{Stateless: tc.versions == nil}))
			t.Cleanup(srv.Close)
			u, _, _ := start(t, config.Upstream{Name: "c", URL: srv.URL}, Options{})
			waitReady(t, u)
			cs, err := u.Session()
			if err != nil {
				t.Fatal(err)
			}
			down := mcp.Meta{metaProtocolVersion: "2026-07-28", metaClientInfo: map[string]any{"name": "downstream"}, "trace": "kept",
				metaClientCapabilities: map[string]any{"sampling": map[string]any{}}}
			if _, err := cs.Complete(ctxT(t), &mcp.CompleteParams{Meta: down,
				Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, Argument: mcp.CompleteParamsArgument{Name: "a"}}); err != nil {
				t.Fatalf("completion/complete: %v", err)
			}
			got := <-seen
			info, _ := got[metaClientInfo].(map[string]any)
			pv, _ := got[metaProtocolVersion].(string)
			if pv != tc.want || got["trace"] != "kept" || (tc.want != "" && info["name"] != "mcp-hub") || (tc.want == "" && got[metaClientInfo] != nil) {
				t.Errorf("the server saw _meta %v", got)
			}
			// A stateless server is told the hub's capabilities narrowed to
			// the caller's: it must not ask for what the caller cannot answer.
			caps, _ := json.Marshal(got[metaClientCapabilities])
			switch want := `{"sampling":{}}`; {
			case tc.want == "" && got[metaClientCapabilities] != nil:
				t.Errorf("a 2025-11-25 server saw the caller's capabilities %s", caps)
			case tc.want != "" && string(caps) != want:
				t.Errorf("the stateless server saw capabilities %s, want %s", caps, want)
			}
			if down[metaProtocolVersion] != "2026-07-28" {
				t.Errorf("the caller's _meta changed: %v", down)
			}
		})
	}
}

// TestStatelessOnlyStdio: a stdio server that refuses initialize is
// reached with server/discover on the next attempt, and its tool calls
// (raw, outside the SDK's client) carry the revision's _meta.
func TestStatelessOnlyStdio(t *testing.T) {
	u, _, _ := start(t, config.Upstream{Name: "modern", Command: fixture.Build(t),
		Args: []string{"-protocols", StatelessProtocolVersion, "-refuse-initialize", "-meta-tool"}}, Options{})
	waitReady(t, u)
	if got := u.ProtocolVersion(); got != StatelessProtocolVersion {
		t.Fatalf("negotiated %q, want %s", got, StatelessProtocolVersion)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(callText(t, u, "meta", map[string]any{})), &meta); err != nil {
		t.Fatal(err)
	}
	info, _ := meta[metaClientInfo].(map[string]any)
	if meta[metaProtocolVersion] != StatelessProtocolVersion || info["name"] != "mcp-hub" || meta[metaClientCapabilities] == nil {
		t.Errorf("the raw call carried _meta %v", meta)
	}
}

// TestProtocolVersionsAgree: the revisions a config may name are those
// the hub's go-sdk speaks.
func TestProtocolVersionsAgree(t *testing.T) {
	if got, want := config.ProtocolVersions, mcp.SupportedProtocolVersions(); !slices.Equal(got, want) {
		t.Errorf("config.ProtocolVersions = %v, go-sdk speaks %v", got, want)
	}
	if !slices.Contains(config.ProtocolVersions, StatelessProtocolVersion) || !slices.Contains(config.ProtocolVersions, ProtocolVersion) {
		t.Errorf("config.ProtocolVersions %v lacks %s or %s", config.ProtocolVersions, StatelessProtocolVersion, ProtocolVersion)
	}
}

// TestProtocolVersionConfig: protocol_version names a revision the hub
// speaks, and not for builtins.
func TestProtocolVersionConfig(t *testing.T) {
	cases := []struct {
		cfg     config.Upstream
		wantErr string
	}{
		{config.Upstream{Command: "srv", ProtocolVersion: StatelessProtocolVersion}, ""},
		{config.Upstream{URL: "http://127.0.0.1:1/mcp", ProtocolVersion: "2025-06-18"}, ""},
		{config.Upstream{Command: "srv", ProtocolVersion: "2027-01-01"}, "not one the hub speaks"},
		{config.Upstream{Builtin: "time", ProtocolVersion: ProtocolVersion}, "does not apply to builtin"},
	}
	for _, tc := range cases {
		err := tc.cfg.Validate()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.wantErr)
		}
	}
}

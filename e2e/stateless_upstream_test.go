//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// TestStatelessUpstream puts go-sdk's everything-server behind the hub as a
// server of the stateless revision (2026-07-28), over stdio (asked for it
// with protocol_version, as stdio defaults to initialize) and over
// stateless streamable HTTP (the default there), and drives the hub with a
// client of today's revision: the server's input_required results reach
// the client as sampling, elicitation and roots requests and the call is
// retried with the answers (a prompt's too); log messages follow the level the client set
// (per request, as the revision has no logging/setLevel); a tool list
// change and a resource update arrive on subscriptions/listen streams and
// reach the client as notifications.
func TestStatelessUpstream(t *testing.T) {
	ev := everythingServer(t)
	cases := []struct {
		name   string
		config func(t *testing.T) string
	}{
		{"stdio", func(*testing.T) string {
			return fmt.Sprintf("servers:\n  everything:\n    command: %s\n    prefix: \"\"\n    protocol_version: %q\n",
				strconv.Quote(ev), statelessRevision)
		}},
		{"http", func(t *testing.T) string {
			addr := freeAddr(t)
			c := startChild(t, "everything-stateless", nil, ev, "-http="+addr) // stateless by default
			url := "http://" + addr + "/mcp"
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := waitMCPReady(ctx, url, c); err != nil {
				t.Fatalf("everything-server did not become ready at %s: %v\n%s", url, err, c.logTail(40))
			}
			return fmt.Sprintf("servers:\n  everything:\n    url: %s\n    prefix: \"\"\n", strconv.Quote(url))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.config(t)
			exe := ""
			if tc.name == "stdio" {
				exe = ev
			}
			hubURL, hub := startHub(t, "hub-stateless-"+tc.name, cfg, exe)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			if got := upstreamProtocol(t, strings.TrimSuffix(hubURL, "/mcp")+"/healthz"); got != statelessRevision {
				t.Fatalf("the hub negotiated %q with the server, want %s\nhub log:\n%s", got, statelessRevision, hub.logTail(40))
			}
			c := newStatelessTestClient()
			cs, err := c.client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hubURL, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			calls := []struct{ tool, want string }{
				{"test_input_required_result_elicitation", "Hello, Ada!"},
				{"test_input_required_result_sampling", "Sampling response: Paris"},
				{"test_input_required_result_list_roots", "Client exposed 1 root(s): file:///work/project"},
				{"test_input_required_result_multiple_inputs", "Paris Ada — 1 root(s) visible"},
				{"test_input_required_result_multi_round", "Multi-round complete: Ada likes teal"},
			}
			for _, call := range calls {
				if got := statelessCallText(ctx, t, cs, call.tool); !strings.Contains(got, call.want) {
					t.Errorf("%s: %q, want it to contain %q\nhub log:\n%s", call.tool, got, call.want, hub.logTail(30))
				}
			}

			// A prompt that asks for input the same way.
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
			if err != nil {
				t.Fatalf("prompts/get: %v", err)
			}
			if len(pr.Messages) != 1 || textOf(pr.Messages[0].Content) != "Context: release notes" {
				t.Errorf("prompts/get with input: %+v", pr.Messages)
			}

			// No level set: the server is asked for none, and sends nothing.
			statelessCallText(ctx, t, cs, "test_tool_with_logging")
			if got := c.logs(); len(got) != 0 {
				t.Errorf("log messages before any logging/setLevel: %v", got)
			}
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatalf("logging/setLevel: %v", err)
			}
			statelessCallText(ctx, t, cs, "test_tool_with_logging")
			// go-sdk's client may hand over a result before it has handled
			// the notifications read ahead of it: wait for them. A message
			// of the first call that arrived late would come first here.
			want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
			if got := c.waitLogs(ctx, len(want)); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("log messages of the call: %q, want %q", got, want)
			}

			// A list change, through subscriptions/listen.
			const transient = "__transient_tool_for_list_changed"
			statelessCallText(ctx, t, cs, "test_trigger_tool_change")
			for !hasTool(ctx, t, cs, transient) {
				select {
				case <-c.toolsChanged:
				case <-ctx.Done():
					t.Fatalf("the server's new tool %s never reached the client\nhub log:\n%s", transient, hub.logTail(40))
				}
			}

			// A resource update, through a subscriptions/listen stream the
			// hub opens for the subscription; the server sends one every 3s.
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
				t.Fatalf("resources/subscribe: %v", err)
			}
			select {
			case uri := <-c.updated:
				if uri != "test://watched-resource" {
					t.Errorf("resource update for %q", uri)
				}
			case <-ctx.Done():
				t.Fatalf("no notifications/resources/updated within the test's time\nhub log:\n%s", hub.logTail(40))
			}
		})
	}
}

// statelessTestClient is a downstream client that answers what the
// server asks for.
type statelessTestClient struct {
	client       *mcp.Client
	toolsChanged chan struct{}
	updated      chan string
	logged       chan struct{}
	mu           sync.Mutex
	messages     []string
}

func newStatelessTestClient() *statelessTestClient {
	c := &statelessTestClient{toolsChanged: make(chan struct{}, 16), updated: make(chan string, 16), logged: make(chan struct{}, 1)}
	c.client = mcp.NewClient(&mcp.Implementation{Name: "stateless-upstream-test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if strings.Contains(req.Params.Message, "context") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": "release notes"}}, nil
			}
			if strings.Contains(req.Params.Message, "color") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "teal"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "scripted", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.messages = append(c.messages, fmt.Sprint(req.Params.Data))
			select {
			case c.logged <- struct{}{}:
			default:
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.toolsChanged <- struct{}{}:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.updated <- req.Params.URI:
			default:
			}
		},
	})
	c.client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	return c
}

// waitLogs waits until n log messages have arrived (or ctx ends), and
// returns and forgets them.
func (c *statelessTestClient) waitLogs(ctx context.Context, n int) []string {
	for {
		c.mu.Lock()
		if len(c.messages) >= n || ctx.Err() != nil {
			out := c.messages
			c.messages = nil
			c.mu.Unlock()
			return out
		}
		c.mu.Unlock()
		select {
		case <-c.logged:
		case <-ctx.Done():
		}
	}
}

// logs returns the log messages received since the last call, and forgets them.
func (c *statelessTestClient) logs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.messages
	c.messages = nil
	return out
}

func statelessCallText(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s: isError: %s", tool, strings.Join(text, " "))
	}
	return strings.Join(text, " ")
}

func hasTool(ctx context.Context, t *testing.T, cs *mcp.ClientSession, name string) bool {
	t.Helper()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if tool.Name == name {
			return true
		}
	}
	return false
}

// upstreamProtocol reads the protocol version of the hub's only upstream
// from /healthz.
func upstreamProtocol(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Servers []struct {
			ProtocolVersion string `json:"protocol_version"`
		} `json:"servers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || len(h.Servers) != 1 {
		t.Fatalf("/healthz: %v (%d servers)", err, len(h.Servers))
	}
	return h.Servers[0].ProtocolVersion
}

func textOf(c mcp.Content) string {
	if tc, ok := c.(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("(%T)", c)
}

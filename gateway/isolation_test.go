package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestIsolationModernPrincipals: two principals' 2026-07-28 clients call,
// over HTTP and at the same time, a tool of a stdio server with
// `isolation: principal` that elicits: each gets its own question, as an
// input_required round, and each call its own answer; each has a process
// of its own, and /healthz counts the two.
func TestIsolationModernPrincipals(t *testing.T) {
	t.Parallel()
	sc := fixture.StdioEntry(t, "iso", "-features")
	sc.Isolation = config.IsolationPrincipal
	cfg := fixture.RestartingConfig(sc)
	on := true
	cfg.Protocol.Modern = &on
	cfg.Auth.Tokens = []config.Token{{Name: "alice", Value: "tok-alice-1234"}, {Name: "bob", Value: "tok-bob-5678"}}
	g := newTestHub(t, cfg, nil)
	srv := httptest.NewServer(g.HTTPHandler(nil))
	t.Cleanup(srv.Close)

	var both sync.WaitGroup
	both.Add(2)
	connect := func(name string) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, &mcp.ClientOptions{
			Logger: quietLogger,
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if req.Params.Message != "who is "+name+"?" {
					return nil, fmt.Errorf("%s was asked %q", name, req.Params.Message)
				}
				both.Done()
				both.Wait() // both questions are out before either is answered
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": name}}, nil
			},
		})
		cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{
			Endpoint: srv.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: fixture.HeaderTransport{"Authorization": "Bearer tok-" + name + map[string]string{"alice": "-1234", "bob": "-5678"}[name]}},
		}, nil)
		if err != nil {
			t.Fatalf("connect %s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("%s negotiated %s", name, v)
		}
		return cs
	}
	results := make(chan string, 2)
	pids := map[string]bool{}
	for _, name := range []string{"alice", "bob"} {
		cs := connect(name)
		res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "iso__pid"})
		if err != nil || res.IsError {
			t.Fatalf("%s: iso__pid: %v %v", name, err, res)
		}
		pids[fixture.ResultText(res)] = true
		go func() {
			res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "iso__elicit", Arguments: map[string]any{"message": "who is " + name + "?"}})
			if err != nil {
				results <- fmt.Sprintf("%s: %v", name, err)
				return
			}
			results <- fmt.Sprintf("%s: isError=%v %s", name, res.IsError, fixture.ResultText(res))
		}()
	}
	for range 2 {
		r := <-results
		name, _, _ := strings.Cut(r, ":")
		if want := fmt.Sprintf(`isError=false action=accept content={"answer":"%s"}`, name); !strings.HasSuffix(r, want) {
			t.Errorf("%s\nwant it to end with %s", r, want)
		}
	}
	if len(pids) != 2 {
		t.Errorf("alice and bob called processes %v; want one each", pids)
	}
	for _, st := range g.Health().Servers {
		if st.Name == "iso" && (st.Isolation != config.IsolationPrincipal || st.IsolatedProcesses != 2) {
			t.Errorf("health of iso: isolation %q, %d processes; want principal, 2", st.Isolation, st.IsolatedProcesses)
		}
	}
}

package hub

// Tests of stdio.go: request ids, answers before the process exits, open
// requests, and bad input as a client's raw lines.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestIDKey(t *testing.T) {
	tests := []struct {
		raw  string
		want string // "" for no id
	}{
		{`7`, "n7"},
		{`7.0`, "n7"},
		{`7e0`, "n7"},
		{`-1.5`, "n-1.5"},
		{`"a"`, "sa"},
		{`"\u0061"`, "sa"},
		{`"7"`, "s7"},
		{`null`, ""},
		{`{}`, ""},
		{``, ""},
	}
	for _, tc := range tests {
		got, ok := idKey(json.RawMessage(tc.raw))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("idKey(%s) = %q, %v; want %q", tc.raw, got, ok, tc.want)
		}
	}
}

// TestStdioAnswersBeforeExit: when stdin ends with quick calls still
// running (`printf '...' | mcp-hub serve`), the hub answers them before the
// session ends. (TestE2EShutdownStdinClosed: a long call does not hold up
// the exit.)
func TestStdioAnswersBeforeExit(t *testing.T) {
	t.Parallel()
	h, _ := secHub(t, fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features")))
	s := secServeStdio(t, h)
	s.send(fixture.RawInitialize)
	s.recv()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx__sleep","arguments":{"ms":300}}}`)
	s.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fx__sleep","arguments":{"ms":200}}}`)
	s.in.Close()

	// Read everything the hub writes until it closes stdout.
	answers := make(chan map[string]string, 1)
	go func() {
		got := map[string]string{}
		for s.out.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(s.out.Bytes(), &m) == nil && m.ID != nil && len(m.Result.Content) > 0 {
				got[string(m.ID)] = m.Result.Content[0].Text
			}
		}
		answers <- got
	}()
	// Without the wait the hub would have dropped 2 and "b".
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio still running 20 s after stdin ended")
	}
	if got := <-answers; got[`2`] != "slept" || got[`"b"`] != "slept" {
		t.Errorf("answers after stdin ended: %v, want 2 and \"b\" slept", got)
	}
}

// TestOpenRequests: requests are open until answered in the SDK's encoding
// or cancelled by the client; notifications and answers to the server's
// own requests never open one.
func TestOpenRequests(t *testing.T) {
	var o openRequests
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"b"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
		`[{"jsonrpc":"2.0","id":10,"method":"ping"}]`,
	} {
		o.read([]byte(line))
	}
	open := func() []string {
		var ids []string
		for id := range o.ids {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	if got := open(); !slices.Equal(got, []string{"n1", "n3", "sx"}) {
		t.Fatalf("open after reading = %v", got)
	}
	o.written([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n"))
	o.written([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":"x"}}` + "\n"))
	o.written([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}` + "\n"))
	if got := open(); !slices.Equal(got, []string{"n3"}) {
		t.Fatalf("open after two answers = %v", got)
	}
	o.read([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`))
	if got := open(); len(got) != 0 {
		t.Errorf("open after the cancellation = %v", got)
	}
	o.wait(context.Background(), time.Hour) // returns at once: nothing open
}

func secErrCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

func secIsError(m map[string]any) (bool, string) {
	r, _ := m["result"].(map[string]any)
	isErr, _ := r["isError"].(bool)
	b, _ := json.Marshal(r["content"])
	return isErr, string(b)
}

// TestSecurityBadInputStdio sends real bad bytes on the hub's stdin. Every
// one gets a JSON-RPC error or an isError result; the session keeps going.
func TestSecurityBadInputStdio(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features"), fixture.StdioEntry(t, "other", "-tools", "a"))
	cfg.Discovery = config.Discovery{Enabled: true}
	cfg.Servers["other"].DeferLoading = new(bool)
	*cfg.Servers["other"].DeferLoading = true
	cfg.MaxRequestBytes = 32 << 10
	h, lg := secHub(t, cfg)
	s := secServeStdio(t, h)
	s.send(fixture.RawInitialize)
	if m := s.recv(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	cases := []struct {
		name, line string
		code       int    // JSON-RPC error code, or 0 for an isError result
		text       string // in the error message or result text
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":10,"method":`, -32700, "parse error"},
		{"garbage", `hello hub`, -32700, "parse error"},
		{"oversized", `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"pad":"` + strings.Repeat("z", 40<<10) + `"}}`, -32600, "max_request_bytes"},
		{"unknown method", `{"jsonrpc":"2.0","id":12,"method":"tools/frobnicate","params":{}}`, -32601, ""},
		{"wrong param type", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":42}}`, -32602, ""},
		{"params not an object", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":"fx__sleep"}`, -32602, ""},
		{"unknown tool", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"fx__slep","arguments":{}}}`, -32602, "fx__sleep"},
		{"arguments not matching the schema", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"fx__sleep","arguments":{"ms":"soon"}}}`, -1, "ms"},
		{"search_tools wrong type", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":5}}}`, 0, "invalid arguments for search_tools"},
		{"search_tools tool_names not a list", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"search_tools","arguments":{"tool_names":"other__a"}}}`, 0, "invalid arguments"},
		{"call_tool wrong type", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":["x"]}}}`, 0, "call_tool needs"},
		{"call_tool arguments not JSON", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"fx__sleep","arguments":"{ms:"}}}`, 0, "not valid JSON"},
		{"call_tool unknown tool", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"nope__x"}}}`, 0, "Unknown tool"},
	}
	for _, c := range cases {
		s.send(c.line)
		m := s.recv()
		switch {
		case c.code == 0:
			isErr, text := secIsError(m)
			if !isErr || !strings.Contains(text, c.text) {
				t.Errorf("%s: got %v, want an isError result containing %q", c.name, m, c.text)
			}
		case c.code == -1: // the upstream's verdict, passed through: either form is proper
			isErr, text := secIsError(m)
			if secErrCode(m) == 0 && !isErr {
				t.Errorf("%s: got %v, want an error", c.name, m)
			}
			if !strings.Contains(fmt.Sprint(m["error"])+text, c.text) {
				t.Errorf("%s: %v does not mention %q", c.name, m, c.text)
			}
		default:
			if got := secErrCode(m); got != c.code {
				t.Errorf("%s: got %v, want JSON-RPC error %d", c.name, m, c.code)
			}
			if e, _ := m["error"].(map[string]any); !strings.Contains(fmt.Sprint(e["message"]), c.text) {
				t.Errorf("%s: message %v lacks %q", c.name, e["message"], c.text)
			}
		}
	}
	// The session still works after all that.
	s.send(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"fx__sleep","arguments":{"ms":1}}}`)
	if isErr, text := secIsError(s.recv()); isErr || !strings.Contains(text, "slept") {
		t.Errorf("after bad input: %s", text)
	}
	// Each bad line the hub answered itself was logged once.
	log := lg.String()
	if n := strings.Count(log, "not JSON; answered with a parse error"); n != 2 {
		t.Errorf("parse errors logged %d times, want 2:\n%s", n, log)
	}
	if n := strings.Count(log, "client request too large"); n != 1 {
		t.Errorf("oversized request logged %d times, want 1", n)
	}
	if n := strings.Count(log, "Unknown tool 'fx__slep'"); n != 1 {
		t.Errorf("unknown tool logged %d times, want 1:\n%s", n, log)
	}
}

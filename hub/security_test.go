package hub

// Bad input over stdio, as a client's raw lines. Helpers are prefixed
// "sec" (helpers_test.go).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// secStdioSession runs ServeStdio over pipes and speaks raw lines.
type secStdioSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func secServeStdio(t *testing.T, h *Hub) *secStdioSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &secStdioSession{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(make([]byte, 1<<20), 16<<20)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { s.done <- h.ServeStdio(ctx, "", inR, outW) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return s
}

func (s *secStdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// recv returns the next message the hub writes, skipping notifications.
func (s *secStdioSession) recv() map[string]any {
	s.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.recvRaw(), &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// recvRaw is recv's line as the hub wrote it.
func (s *secStdioSession) recvRaw() []byte {
	s.t.Helper()
	type line struct {
		b   []byte
		err error
	}
	ch := make(chan line, 1)
	go func() {
		for s.out.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
				ch <- line{err: fmt.Errorf("hub wrote non-JSON %q: %v", s.out.Text(), err)}
				return
			}
			if m.Method != "" && m.ID == nil {
				continue
			}
			ch <- line{b: bytes.Clone(s.out.Bytes())}
			return
		}
		ch <- line{err: fmt.Errorf("stdout closed: %v", s.out.Err())}
	}()
	select {
	case l := <-ch:
		if l.err != nil {
			s.t.Fatal(l.err)
		}
		return l.b
	case <-time.After(20 * time.Second):
		s.t.Fatal("no answer from the hub within 20s")
		return nil
	}
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

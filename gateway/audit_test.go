package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// auditLines reads the audit log's entries.
func auditLines(t testing.TB, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line is not JSON: %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestAuditLog: a line per tool call, search and session start and end,
// naming the principal, and no argument value (acceptance 3).
func TestAuditLog(t *testing.T) {
	t.Parallel()
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Name: "ci", Value: "audit-token-1234"}}
	cfg.Audit.File = filepath.Join(t.TempDir(), "audit", "audit.jsonl")
	cfg.HashKey = "audit-test-hash-key-0123456789abcdef"
	_, url, _ := gwHub(t, cfg, &gwUpstream{})
	cs, err := fixture.HTTPClient(t, url+"/mcp", map[string]string{"Authorization": "Bearer audit-token-1234"})
	if err != nil {
		t.Fatal(err)
	}
	secretish := []string{"ARG-VALUE-4242", "LOCATION-7777", "weather forecast"}
	calls := []struct {
		tool    string
		args    map[string]any
		method  string
		server  string
		outcome string
	}{
		{"gw__ok", map[string]any{"text": "ARG-VALUE-4242"}, "tools/call", "gw", "ok"},
		{"gw__fail", map[string]any{"text": "ARG-VALUE-4242"}, "tools/call", "gw", "tool_error"},
		{"gw__slow", nil, "tools/call", "gw", "timeout"},
		{"no_such_tool", map[string]any{"text": "ARG-VALUE-4242"}, "tools/call", "", "error"},
		{hub.SearchToolsName, map[string]any{"query": "weather forecast"}, "search_tools", "", "ok"},
		{hub.CallToolName, map[string]any{"name": "weather__get_forecast", "arguments": map[string]any{"location": "LOCATION-7777"}}, "tools/call", "weather", "ok"},
	}
	for _, c := range calls {
		gwTool(t, cs, c.tool, c.args)
	}
	cs.Close()
	fixture.Eventually(t, 30*time.Second, "the session's end is logged", func() bool {
		lines := auditLines(t, cfg.Audit.File)
		return len(lines) > 0 && lines[len(lines)-1]["method"] == "session/end"
	})

	data, _ := os.ReadFile(cfg.Audit.File)
	for _, s := range secretish {
		if strings.Contains(string(data), s) {
			t.Errorf("the audit log holds the argument value %q:\n%s", s, data)
		}
	}
	lines := auditLines(t, cfg.Audit.File)
	if len(lines) != len(calls)+2 {
		t.Fatalf("%d lines, want %d (session start, a line per call, session end):\n%s", len(lines), len(calls)+2, data)
	}
	if lines[0]["method"] != "session/start" || !strings.HasPrefix(lines[0]["client"].(string), "sec-test/") {
		t.Errorf("first line: %v, want the session's start with its client", lines[0])
	}
	for i, c := range calls {
		e := lines[i+1]
		if e["method"] != c.method || e["outcome"] != c.outcome || (e["server"] != nil && e["server"] != c.server) || (c.server != "" && e["server"] != c.server) {
			t.Errorf("call %s: line %v, want method %s, server %q, outcome %s", c.tool, e, c.method, c.server, c.outcome)
		}
		if e["principal"] != "token:ci" || e["principal_kind"] != "token" || e["session"] != lines[0]["session"] || e["mcp_session"] == "" {
			t.Errorf("call %s: line %v does not name the principal ci and the session", c.tool, e)
		}
		if _, ok := e["duration_ms"].(float64); !ok {
			t.Errorf("call %s: no duration: %v", c.tool, e)
		}
		if c.args != nil {
			// Arguments are guessable: they are hashed with the
			// deployment's key, never as a plain SHA-256.
			raw, _ := json.Marshal(c.args)
			mac := hmac.New(sha256.New, []byte(cfg.HashKey))
			mac.Write(raw)
			plain := sha256.Sum256(raw)
			if e["args_hmac"] != hex.EncodeToString(mac.Sum(nil)) || e["args_hmac"] == hex.EncodeToString(plain[:]) {
				t.Errorf("call %s: args_hmac %v, want the HMAC-SHA256 of %s under hash_key", c.tool, e["args_hmac"], raw)
			}
			if _, ok := e["args_sha256"]; ok {
				t.Errorf("call %s: an unkeyed args_sha256 is written: %v", c.tool, e)
			}
		}
		if _, ok := e["arguments"]; ok {
			t.Errorf("call %s: arguments written without include_arguments: %v", c.tool, e)
		}
	}
	if lines[6]["tool"] != "weather__get_forecast" || lines[6]["loaded"] != nil {
		t.Errorf("call_tool line names %v, want the tool it called", lines[6]["tool"])
	}
	if lines[5]["loaded"] != float64(2) {
		t.Errorf("search line: loaded %v, want 2", lines[5]["loaded"])
	}
	if end := lines[len(lines)-1]; end["method"] != "session/end" || end["principal"] != "token:ci" {
		t.Errorf("last line %v, want the session's end", end)
	}
}

// TestAuditIncludeArguments: with include_arguments the values are there,
// with the config's secrets redacted.
func TestAuditIncludeArguments(t *testing.T) {
	cfg := gwConfig()
	cfg.Secrets = []string{"hunter2-from-env"}
	cfg.Audit = config.Audit{File: filepath.Join(t.TempDir(), "audit.jsonl"), IncludeArguments: true}
	h, _, _ := gwHub(t, cfg, &gwUpstream{})
	cs := connectClient(t, h, "")
	fixture.CallText(t, cs, "gw__ok", map[string]any{"text": "visible value", "key": "hunter2-from-env"})
	lines := auditLines(t, cfg.Audit.File)
	var call map[string]any
	for _, e := range lines {
		if e["method"] == "tools/call" {
			call = e
		}
	}
	args, _ := json.Marshal(call["arguments"])
	if !strings.Contains(string(args), "visible value") || strings.Contains(string(args), "hunter2") || !strings.Contains(string(args), "[REDACTED]") {
		t.Errorf("arguments = %s, want the value with the secret redacted", args)
	}
	if call["principal"] != "local" {
		t.Errorf("an in-process session's principal = %v, want local", call["principal"])
	}
}

// TestAuditFileUnopenable: an audit file the hub cannot open is a config error.
func TestAuditFileUnopenable(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(notDir, nil, 0o600)
	cfg := gwConfig()
	cfg.Audit.File = filepath.Join(notDir, "audit.jsonl")
	_, err := New(fixture.Context(t), cfg, Options{Hub: hub.Options{Logger: quietLogger, Builtin: (&gwUpstream{}).builtin(fixture.NewServers())}, OpenStore: openStore})
	var cerr *config.Error
	if !errors.As(err, &cerr) || !strings.Contains(err.Error(), "audit.file") {
		t.Errorf("New with an unopenable audit file: %v, want a config error naming audit.file", err)
	}
}

// TestAuditArgumentsBound: with include_arguments, arguments over
// maxAuditedArguments as they would be written (escapes included) are
// left out, with their size and args_hmac, so a call with large arguments
// writes a line about the size of one without; arguments under the bound
// are written whole.
func TestAuditArgumentsBound(t *testing.T) {
	t.Parallel()
	cfg := gwConfig()
	cfg.HashKey = "audit-test-hash-key-0123456789abcdef"
	cfg.Audit = config.Audit{File: filepath.Join(t.TempDir(), "audit.jsonl"), IncludeArguments: true}
	h, _, _ := gwHub(t, cfg, &gwUpstream{})
	cs := connectClient(t, h, "")
	calls := []struct {
		name    string
		args    map[string]any
		written bool
	}{
		{"small", map[string]any{"text": "visible value"}, true},
		{"just under", map[string]any{"text": strings.Repeat("a", maxAuditedArguments-len(`{"text":""}`))}, true},
		{"just over", map[string]any{"text": strings.Repeat("a", maxAuditedArguments+1-len(`{"text":""}`))}, false},
		{"large", map[string]any{"text": strings.Repeat("x", 12<<10)}, false},
	}
	for _, c := range calls {
		fixture.CallText(t, cs, "gw__ok", c.args)
	}
	data, err := os.ReadFile(cfg.Audit.File)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"method":"tools/call"`) {
			lines = append(lines, line)
		}
	}
	if len(lines) != len(calls) {
		t.Fatalf("%d call lines, want %d:\n%.2000s", len(lines), len(calls), data)
	}
	small := len(lines[0])
	t.Logf("line sizes: %d (small arguments), %d (arguments at the bound), %d (left out)", len(lines[0]), len(lines[1]), len(lines[3]))
	for i, c := range calls {
		var e map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(c.args)
		_, written := e["arguments"]
		switch {
		case written != c.written:
			t.Errorf("%s (%d bytes sent): arguments written %v, want %v: %.300s", c.name, len(raw), written, c.written, lines[i])
		case !c.written && (e["args_hmac"] != hmacHex(cfg.HashKey, string(raw)) || !strings.Contains(fmt.Sprint(e["arguments_note"]), "bytes")):
			t.Errorf("%s: line %.300s, want args_hmac and a note with the size", c.name, lines[i])
		case !c.written && len(lines[i]) > small+200:
			t.Errorf("%s: a line of %d bytes, want about one without arguments (%d)", c.name, len(lines[i]), small)
		case c.written && len(lines[i]) > small+maxAuditedArguments:
			t.Errorf("%s: a line of %d bytes, over %d + the bound", c.name, len(lines[i]), small)
		}
	}
}

// TestAuditArgumentsBoundAsWritten: the bound is on the arguments as the
// line holds them: a client may send '<' raw, which the line escapes to
// six bytes.
func TestAuditArgumentsBoundAsWritten(t *testing.T) {
	a := &auditLog{hash: &keyedHash{key: []byte("audit-test-hash-key-0123456789abcdef")}, includeArgs: true, redact: redact.New()}
	raw := json.RawMessage(`{"text":"` + strings.Repeat("<", maxAuditedArguments/2) + `"}`)
	e := &auditEntry{}
	a.arguments(e, raw)
	if e.Arguments != nil || !strings.Contains(e.ArgsNote, "escaped") || e.ArgsDigest == "" {
		t.Errorf("%d bytes of '<' sent: arguments %d bytes, note %q; want them left out, with a note and args_hmac", len(raw), len(e.Arguments), e.ArgsNote)
	}
}

//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLoggedCallLine is the bound this test holds each audit line and each
// log line of a refused call to: the limits in docs/security.md (a shown name is at
// most 128 bytes, an audit field 256) keep them far below it.
const maxLoggedCallLine = 4 << 10

// TestLongToolNamesCannotFloodLogs: calls with multi-MiB tool names, full
// of ANSI escapes, \r\n and bidi controls, through `mcp-hub serve --http`
// with a small rotating audit file. Each call's audit line and log line
// stay small, the first call's audit record survives them all, and no
// control character reaches the audit file or the log raw (no forged log
// line, no recoloured terminal).
func TestLongToolNamesCannotFloodLogs(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	cfg := writeConfig(t, fmt.Sprintf("servers:\n  time: {builtin: time}\naudit: {file: %q, max_size_mb: 1, max_backups: 1}\n", audit))
	addr := freeAddr(t)
	hub := startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", cfg, "--log-level", "info", "serve", "--http", addr)
	waitHealthy(t, "http://"+addr+"/healthz")
	url := "http://" + addr + "/mcp"

	post := func(headers map[string]string, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := post(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`)
	session := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The earlier call whose audit record must survive.
	if _, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"earlier_call_marker"}}`); !strings.Contains(body, "Unknown tool") {
		t.Fatalf("first call: %s\nhub log:\n%s", body, hub.logTail(20))
	}

	// Control characters as a client writes them in JSON; then the name
	// runs to just under max_request_bytes (4 MiB).
	const injected = `\u001b[31mRED\r\ntime=2026-01-01T00:00:00Z level=ERROR msg=forged\u202egnp.exe\u0085`
	long := injected + strings.Repeat("A", 3<<20+512<<10)
	for i := range 3 {
		_, body := post(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s-%d"}}`, 10+i, long, i))
		if !strings.Contains(body, "Unknown tool") || len(body) > maxLoggedCallLine {
			t.Errorf("call %d: %d bytes of answer: %.300s", i, len(body), body)
		}
	}
	// One more ordinary call: when its audit line is there, so are the
	// lines of the calls before it.
	post(session, `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"time__day_of_week","arguments":{"date":"2026-01-02"}}}`)

	var auditText []byte
	for _, f := range []string{audit + ".1", audit} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		auditText = append(auditText, b...)
	}
	lines := strings.Split(strings.TrimSpace(string(auditText)), "\n")
	var first, refused int
	for _, line := range lines {
		if len(line) > maxLoggedCallLine {
			t.Errorf("audit line of %d bytes: %.300s", len(line), line)
		}
		if strings.Contains(line, `"tool":"earlier_call_marker"`) {
			first++
		}
		if strings.Contains(line, "level=ERROR msg=forged") {
			refused++
		}
	}
	if first != 1 || refused != 3 {
		t.Errorf("audit: %d records of the earlier call (want 1), %d of the long names (want 3):\n%.3000s", first, refused, auditText)
	}
	if bytes.ContainsAny(auditText, "\x1b\r\u202e\u0085") {
		t.Errorf("a control character reached the audit file raw:\n%q", auditText)
	}

	log, err := os.ReadFile(hub.logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if len(line) > maxLoggedCallLine {
			t.Errorf("log line of %d bytes: %.300s", len(line), line)
		}
		if strings.HasPrefix(line, "time=2026-01-01T00:00:00Z") {
			t.Errorf("a forged log line: %q", line)
		}
	}
	if bytes.ContainsAny(log, "\x1b\r\u202e\u0085") {
		t.Errorf("a control character reached the log raw")
	}
	if !bytes.Contains(log, []byte("Unknown tool")) {
		t.Errorf("the refused calls are not logged:\n%s", hub.logTail(20))
	}
}

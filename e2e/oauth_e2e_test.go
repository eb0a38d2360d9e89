//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestOAuthEndToEnd drives the real commands as processes against a real
// authorization server and a protected MCP server on 127.0.0.1: a running
// `serve` reports the server needs_login and its tools' calls name the fix;
// `mcp-hub login` (with this test binary as the consenting browser) stores
// a token in 0600 files in a 0700 folder; the running serve picks it up
// without a restart; `call` works and exits 2 on a bad name; `logout`
// forgets it. No secret the authorization server issued appears in any
// output of the run.
func TestOAuthEndToEnd(t *testing.T) {
	as := fixture.NewAuthServer(t, time.Hour, "mcp:read")
	ps := fixture.NewProtectedServer(t, as, "mcp:read")
	state := filepath.Join(t.TempDir(), "state")
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"MCP_HUB_STATE_DIR=" + state, "BROWSER=" + testBinary(), envAsBrowser + "=1"}
	cfg := writeConfig(t, fmt.Sprintf("servers:\n  svc:\n    url: %q\n", ps.URL))
	var outputs []string // everything the run printed, for the leak check
	run := func(args ...string) (string, int) {
		t.Helper()
		out, code := runMain(t, env, append([]string{"--config", cfg}, args...)...)
		outputs = append(outputs, out)
		return out, code
	}

	addr := freeAddr(t)
	serve := startChild(t, "serve", append(env, envAsMain+"=1"), self, "--config", cfg, "serve", "--http", addr)
	health := func() map[string]string {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		outputs = append(outputs, string(body))
		var h struct {
			Servers []struct {
				Name      string `json:"name"`
				State     string `json:"state"`
				LastError string `json:"last_error"`
			} `json:"servers"`
		}
		json.Unmarshal(body, &h)
		out := map[string]string{}
		for _, s := range h.Servers {
			out[s.Name] = s.State
			out[s.Name+".error"] = s.LastError
		}
		return out
	}
	fixture.Eventually(t, 60*time.Second, "serve to report svc needs_login", func() bool { return health()["svc"] == "needs_login" })
	if h := health(); !strings.Contains(h["svc.error"], "mcp-hub login svc") {
		t.Errorf("/healthz error for svc: %q; want it to name `mcp-hub login svc`", h["svc.error"])
	}
	if log := serve.logTail(50); !strings.Contains(log, "needs authorization: run `mcp-hub login svc`") {
		t.Errorf("serve did not print the login hint at start:\n%s", log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callText := func() (string, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "svc__whoami"})
		if err != nil {
			return err.Error(), true
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	if text, isErr := callText(); !isErr || !strings.Contains(text, "mcp-hub login svc") || !strings.Contains(text, "retry") {
		t.Errorf("call before login: %q (error %v); want a retryable error naming `mcp-hub login svc`", text, isErr)
	} else {
		outputs = append(outputs, text)
	}
	if out, code := run("servers", "--json"); code != 0 || !strings.Contains(out, `"needs_login"`) {
		t.Errorf("servers --json before login (exit %d):\n%s", code, out)
	}

	out, code := run("login", "svc", "--timeout", "30s")
	if code != 0 || !strings.Contains(out, "Logged in to 'svc'") || !strings.Contains(out, "scopes:        mcp:read") || !strings.Contains(out, "refresh token: yes") {
		t.Fatalf("login (exit %d):\n%s", code, out)
	}
	loggedIn := time.Now()
	tokens := filepath.Join(state, "tokens")
	st, err := os.Stat(tokens)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("tokens folder: %v, mode %v; want 0700", err, st.Mode().Perm())
	}
	files, _ := filepath.Glob(filepath.Join(tokens, "svc-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	if st, _ := os.Stat(files[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", files[0], st.Mode().Perm())
	}

	fixture.Eventually(t, 15*time.Second, "the running serve to pick up the login", func() bool { return health()["svc"] == "ready" })
	t.Logf("serve picked up the login %v after it was stored", time.Since(loggedIn).Round(10*time.Millisecond))
	if text, isErr := callText(); isErr || text != "scopes: mcp:read" {
		t.Errorf("call through serve after login: %q (error %v)", text, isErr)
	}

	if out, code := run("call", "svc__whoami"); code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "\nscopes: mcp:read") {
		t.Errorf("call svc__whoami (exit %d):\n%s", code, out)
	}
	if out, code := run("call", "svc__whoam"); code != 2 || !strings.Contains(out, "Did you mean: svc__whoami") {
		t.Errorf("call of a bad name (exit %d, want 2):\n%s", code, out)
	}
	if out, code := run("servers", "--json"); code != 0 || !strings.Contains(out, `"ready"`) {
		t.Errorf("servers --json after login (exit %d):\n%s", code, out)
	}

	if out, code := run("logout", "svc"); code != 0 || !strings.Contains(out, "Logged out of 'svc'") {
		t.Errorf("logout (exit %d):\n%s", code, out)
	}
	if files, _ := filepath.Glob(filepath.Join(tokens, "svc-*.json")); len(files) != 0 {
		t.Errorf("logout left %v", files)
	}
	if out, code := run("servers", "--json"); code != 0 || !strings.Contains(out, `"needs_login"`) {
		t.Errorf("servers --json after logout (exit %d):\n%s", code, out)
	}
	if out, code := run("logout", "svc"); code != 0 || !strings.Contains(out, "Nothing stored") {
		t.Errorf("second logout (exit %d):\n%s", code, out)
	}

	serve.stop()
	outputs = append(outputs, serve.logTail(100000))
	if c := as.Counters(); c.Registrations != 1 || c.CodeGrants != 1 {
		t.Errorf("authorization server saw %+v; want one registration and one code grant", c)
	}
	all := strings.Join(outputs, "\n")
	for _, s := range as.Secrets() {
		if strings.Contains(all, s) {
			t.Errorf("a secret the authorization server issued (%.14s...) appears in the run's output", s)
		}
	}
}

// TestCallCommand: `mcp-hub call` run as a process. It calls a deferred
// tool directly; key=value arguments are JSON when they parse, or one JSON
// object; flags (its own and the global ones) go before or after TOOL;
// stdout carries the result's text alone (--json: the whole result, with
// structuredContent), logs go to stderr; isError exits 1 with the tool's
// text; a server's elicitation is answered as --elicitation says; a bad
// name exits 2 with the closest names, and exits 1 instead when a server
// that has not listed its tools may own it.
func TestCallCommand(t *testing.T) {
	fx := fixture.Build(t)
	cfg := writeConfig(t, fmt.Sprintf(`discovery:
  enabled: true
  defer_all: true
servers:
  calc:
    builtin: calc
  fx:
    command: %q
    args: [-name, fx, -features]
`, fx))
	down := writeConfig(t, "servers:\n  calc:\n    builtin: calc\n  gone:\n    command: /nonexistent/mcp-server\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string   // exactly, when set
		want   []string // in stdout (stderr for a failure without output)
	}{
		{"key=value, deferred tool", []string{"call", "calc__evaluate", "expression=2^10"}, 0, "2^10 = 1024\n", nil},
		{"JSON object, --json after", []string{"call", "calc__evaluate", `{"expression": "6*7"}`, "--json"}, 0, "", []string{`"structuredContent"`, "42"}},
		{"numbers from key=value", []string{"call", "calc__percentage", "operation=percent_of", "a=15", "b=80"}, 0, "", []string{"12"}},
		{"stdio server", []string{"call", "fx__sleep", "ms=1"}, 0, "slept\n", nil},
		{"--json before TOOL, structured content", []string{"call", "--json", "fx__verbatim"}, 0, "", []string{`"structuredContent"`, `"zeta": 1`, `"text": "verbatim`}},
		{"global flag after TOOL", []string{"call", "fx__sleep", "ms=1", "--log-level", "error"}, 0, "slept\n", nil},
		{"isError exits 1 with the text", []string{"call", "fx__fail", "message=boom"}, 1, "boom\n", nil},
		{"isError from a builtin", []string{"call", "calc__evaluate", "expression=1/0"}, 1, "", nil},
		{"elicitation declined by default", []string{"call", "fx__elicit", "message=ok?"}, 0, "", []string{"action=decline"}},
		{"elicitation accepted", []string{"call", "fx__elicit", "message=ok?", "--elicitation", "accept"}, 0, "", []string{"action=accept"}},
		{"bad name exits 2", []string{"call", "calc__evaluat"}, 2, "", []string{"unknown tool 'calc__evaluat'", "Did you mean: calc__evaluate"}},
		{"bad arguments exit 2", []string{"call", "calc__evaluate", "expression"}, 2, "", []string{"not key=value"}},
		{"bad --elicitation exits 2", []string{"call", "fx__elicit", "--elicitation", "maybe"}, 2, "", []string{"use accept, decline or cancel"}},
		{"no TOOL exits 2", []string{"call"}, 2, "", []string{"usage: mcp-hub call TOOL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runMainSplit(t, append([]string{"--config", cfg}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("mcp-hub %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, stdout, stderr)
			}
			if tc.stdout != "" && stdout != tc.stdout {
				t.Errorf("mcp-hub %q: stdout %q, want %q", tc.args, stdout, tc.stdout)
			}
			if slices.Contains(tc.args, "--log-level") && strings.Contains(stderr, "level=INFO") {
				t.Errorf("mcp-hub %q: --log-level after TOOL was not taken:\n%s", tc.args, stderr)
			}
			where := stdout
			if tc.code != 0 && stdout == "" {
				where = stderr
			}
			for _, w := range tc.want {
				if !strings.Contains(where, w) {
					t.Errorf("mcp-hub %q: output lacks %q:\nstdout:\n%s\nstderr:\n%s", tc.args, w, stdout, stderr)
				}
			}
		})
	}
	t.Run("a server that has not listed may own the name", func(t *testing.T) {
		_, stderr, code := runMainSplit(t, "--config", down, "call", "gone__tool")
		if code != 1 || !strings.Contains(stderr, "unknown tool 'gone__tool'") || !strings.Contains(stderr, "gone: ") {
			t.Errorf("exit %d, want 1 with the server that is down:\n%s", code, stderr)
		}
	})
}

// runMainSplit is runMain with stdout and stderr apart.
func runMainSplit(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), envAsMain+"=1")
	cmd.Dir = t.TempDir()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mcp-hub %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

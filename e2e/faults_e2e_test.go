//go:build linux

// Process-level fault tests: the hub (this test binary as mcp-hub) is
// stopped by SIGINT, SIGTERM or the end of stdin and must take every child
// process with it; a full run with secrets in the config must never print
// them; binding beyond loopback without auth warns loudly.

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// feChildren lists the live (non-zombie) processes whose parent is pid.
func feChildren(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state := feStat(p); ppid == pid && state != "Z" {
			out = append(out, p)
		}
	}
	return out
}

// feStat reads a process's parent and state from /proc/<pid>/stat.
func feStat(pid int) (ppid int, state string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, ""
	}
	// pid (comm) state ppid ...; comm may contain spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

func feAlive(pid int) bool {
	_, state := feStat(pid)
	return state != "" && state != "Z"
}

// feConfig has two stdio fixture servers.
func feConfig(t *testing.T) string {
	fx := fixture.Build(t)
	return writeConfig(t, fmt.Sprintf(`
servers:
  one: {command: %q, args: [-name, one, -features]}
  two: {command: %q, args: [-name, two, -tools, a]}
restart: {initial_backoff: 50ms, max_backoff: 200ms}
`, fx, fx))
}

// feNoOrphans fails unless every pid has exited.
func feNoOrphans(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, p := range pids {
			if feAlive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range alive {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("child processes %v outlived the hub", alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestE2EShutdownSignals: SIGINT and SIGTERM stop an HTTP hub, and every
// stdio server it started exits with it.
func TestE2EShutdownSignals(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			addr := freeAddr(t)
			hub := startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", feConfig(t), "serve", "--http", addr)
			fixture.Eventually(t, 60*time.Second, "two child servers", func() bool { return len(feChildren(hub.cmd.Process.Pid)) == 2 })
			waitHealthy(t, "http://"+addr+"/healthz")
			kids := feChildren(hub.cmd.Process.Pid)
			// A session with a call in flight, so shutdown has work to end.
			cs := feHTTPSession(t, "http://"+addr+"/mcp")
			go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "one__sleep", Arguments: map[string]any{"ms": 60000}})
			time.Sleep(100 * time.Millisecond)
			begin := time.Now()
			hub.cmd.Process.Signal(sig)
			select {
			case <-hub.done:
			case <-time.After(15 * time.Second):
				t.Fatalf("hub still running 15s after %v:\n%s", sig, hub.logTail(30))
			}
			t.Logf("hub exited %v after %v (%v)", time.Since(begin).Round(time.Millisecond), sig, hub.waitErr)
			if hub.waitErr != nil {
				t.Errorf("hub exit after %v: %v\n%s", sig, hub.waitErr, hub.logTail(30))
			}
			feNoOrphans(t, kids)
		})
	}
}

func feHTTPSession(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "fe", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestE2EShutdownStdinClosed: in stdio mode the end of stdin stops the hub,
// and every stdio server it started exits with it.
func TestE2EShutdownStdinClosed(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Plain files and an os.Pipe, so that Wait never waits on copying.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(t.TempDir(), "hub.out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(self, "--config", feConfig(t), "serve")
	cmd.Env = append(os.Environ(), envAsMain+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stdinW.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	// A client on the pipe: initialize, initialized, and a call left in flight.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fe","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"one__sleep","arguments":{"ms":60000}}}`,
	} {
		if _, err := io.WriteString(stdinW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	fixture.Eventually(t, 60*time.Second, "two child servers", func() bool { return len(feChildren(cmd.Process.Pid)) == 2 })
	fixture.Eventually(t, 60*time.Second, "the initialize answer", func() bool {
		b, _ := os.ReadFile(outPath)
		return bytes.Contains(b, []byte(`"id":1,"result"`))
	})
	kids := feChildren(cmd.Process.Pid)
	time.Sleep(300 * time.Millisecond)
	stdinW.Close()
	select {
	case <-done:
		if waitErr != nil {
			b, _ := os.ReadFile(outPath)
			t.Errorf("hub exit after stdin closed: %v\n%s", waitErr, b)
		}
	case <-time.After(15 * time.Second):
		b, _ := os.ReadFile(outPath)
		t.Fatalf("hub still running 15s after stdin closed:\n%s", b)
	}
	feNoOrphans(t, kids)
}

// TestE2ESecretsNeverLogged: a full run with secrets in env, headers, the
// URL and ${VAR} expansions (config errors, connect errors, calls, a
// non-loopback bind) never prints a secret; the bind warning is loud.
func TestE2ESecretsNeverLogged(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"E2E_SECRET_ENV":    "env-secret-5d2c81",
		"E2E_SECRET_QUERY":  "query-secret-a09f3e",
		"E2E_SECRET_HEADER": "header-secret-77be04",
		"E2E_SECRET_URL":    "url-secret-c4d1e9",
	}
	const literal = "literal-header-secret-3f8a"
	var env []string
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	fx := fixture.Build(t)
	var logs []string

	// A config error that quotes a value carrying a secret.
	bad := writeConfig(t, `
servers:
  broken: {url: "ftp://user:${E2E_SECRET_URL}@example.com/mcp"}
`)
	out, code := runMain(t, env, "--config", bad, "config", "check")
	if code != exitConfig || !strings.Contains(out, "not an http(s) URL") {
		t.Errorf("config check of a bad config: exit %d\n%s", code, out)
	}
	logs = append(logs, out)

	good := writeConfig(t, fmt.Sprintf(`
servers:
  fx:
    command: %q
    args: [-name, fx, -features, -env-tool]
    env: {FX_API_KEY: "${E2E_SECRET_ENV}", FX_LITERAL: %q}
  remote:
    url: "http://127.0.0.1:1/mcp?token=${E2E_SECRET_QUERY}"
    headers: {Authorization: "Bearer ${E2E_SECRET_HEADER}", X-Api-Key: %q}
restart: {initial_backoff: 50ms, max_backoff: 200ms, unhealthy_after: 3, cooldown: 1m}
`, fx, "literal-env-secret-91c2", literal))

	// mcp-hub servers: states, errors, no secrets.
	out, _ = runMain(t, env, "--config", good, "servers")
	if !strings.Contains(out, "RESTARTS") || !strings.Contains(out, "remote") || !strings.Contains(out, "connection refused") {
		t.Errorf("servers:\n%s", out)
	}
	logs = append(logs, out)
	out, _ = runMain(t, env, "--config", good, "servers", "--json")
	var health struct {
		Servers []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			LastError string `json:"last_error"`
		} `json:"servers"`
	}
	if i := strings.Index(out, "{"); i >= 0 {
		json.NewDecoder(strings.NewReader(out[i:])).Decode(&health)
	}
	if len(health.Servers) != 2 {
		t.Errorf("servers --json:\n%s", out)
	}
	logs = append(logs, out)

	// serve on all interfaces without auth: a loud warning; then calls.
	port := strings.Split(freeAddr(t), ":")[1]
	hub := startChild(t, "hub", append(env, envAsMain+"=1"), self, "--config", good, "--log-level", "debug", "serve", "--http", "0.0.0.0:"+port, "--allow-unauthenticated")
	base := "http://127.0.0.1:" + port
	fixture.Eventually(t, 60*time.Second, "fx ready", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `"name":"fx","transport":"stdio","state":"ready"`)
	})
	cs := feHTTPSession(t, base+"/mcp")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__env", Arguments: map[string]any{"name": "FX_API_KEY"}})
	if err != nil || res.IsError {
		t.Fatalf("fx__env: %v %v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != secrets["E2E_SECRET_ENV"] {
		t.Errorf("the child did not get its configured env: %q", text)
	}
	for _, name := range []string{"remote__anything", "fx__nope"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		var text string
		if err != nil {
			text = err.Error()
		} else {
			b, _ := json.Marshal(res)
			text = string(b)
		}
		logs = append(logs, text) // what the client sees is checked too
	}
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__log", Arguments: map[string]any{"message": "hello"}})
	resp, err := http.Get(base + "/healthz")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		logs = append(logs, string(b))
	}
	hub.stop()
	hubLog, _ := os.ReadFile(hub.logPath)
	logs = append(logs, string(hubLog))
	if !strings.Contains(string(hubLog), "LISTENING BEYOND THIS MACHINE WITHOUT AUTH") || !strings.Contains(string(hubLog), "level=WARN") {
		t.Errorf("no loud warning for a 0.0.0.0 bind without auth:\n%s", hubLog)
	}
	if !strings.Contains(string(hubLog), "connection refused") {
		t.Errorf("the remote server's connect error is not logged:\n%s", hubLog)
	}
	all := strings.Join(logs, "\n----\n")
	for name, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("secret %s (%s) printed:\n%s", name, s, feAround(all, s))
		}
	}
	for _, s := range []string{literal, "literal-env-secret-91c2"} {
		if strings.Contains(all, s) {
			t.Errorf("literal secret %s printed:\n%s", s, feAround(all, s))
		}
	}
	if !strings.Contains(all, "[REDACTED]") {
		t.Error("nothing was redacted: the test did not exercise secret-bearing errors")
	}
}

// TestE2EBindWarning: a loopback bind does not warn.
func TestE2EBindWarning(t *testing.T) {
	self, _ := hubBinary()
	addr := freeAddr(t)
	hub := startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", feConfig(t), "serve", "--http", addr)
	waitHealthy(t, "http://"+addr+"/healthz")
	hub.stop()
	if b, _ := os.ReadFile(hub.logPath); bytes.Contains(b, []byte("LISTENING BEYOND")) {
		t.Errorf("warning on a loopback bind:\n%s", b)
	}
}

func feAround(s, sub string) string {
	i := strings.Index(s, sub)
	lo, hi := max(0, i-300), min(len(s), i+len(sub)+100)
	return s[lo:hi]
}

//go:build linux

package e2e

// The config fails closed, end to end (the real binary): a credential
// that expands empty, an open bind without auth, a file that is not a
// config or is too large, at start-up and on reload.

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestEmptyCredentialRefused: a credential key whose ${VAR} is unset or
// empty stops `serve` and `config check` with exit code 2, naming the key
// and the variable; the hub never starts without the auth it was given.
func TestEmptyCredentialRefused(t *testing.T) {
	t.Parallel()
	const srv = "servers:\n  t: {builtin: time}\n"
	const oauth = "auth:\n  oauth:\n    issuer: https://id.example.com\n    audience: https://hub.example.com/mcp\n"
	configs := []struct{ name, doc, key string }{
		{"token", srv + "auth: {tokens: [\"${CS_HUB_TOKEN}\"]}\n", "auth.tokens[0]"},
		{"named token", srv + "auth:\n  tokens:\n    - {name: ci, token: \"${CS_HUB_TOKEN}\"}\n", "auth.tokens[0].token"},
		{"required scope", srv + oauth + "    required_scopes: [\"${CS_HUB_TOKEN}\"]\n", "auth.oauth.required_scopes[0]"},
		{"toolset claim", srv + oauth + "    toolset_claim: ${CS_HUB_TOKEN}\n", "auth.oauth.toolset_claim"},
		{"upstream header", "servers:\n  r:\n    url: https://mcp.example.com/mcp\n    headers: {Authorization: \"Bearer ${CS_HUB_TOKEN}\"}\n", "servers.r.headers.Authorization"},
	}
	envs := []struct {
		name string
		env  []string
		why  string
	}{
		{"unset", nil, "is not set"},
		{"empty", []string{"CS_HUB_TOKEN="}, "is empty"},
	}
	for _, cfg := range configs {
		path := fixture.WriteFile(t, "hub.yaml", cfg.doc)
		for _, e := range envs {
			for _, cmd := range [][]string{{"config", "check"}, {"serve", "--http", "127.0.0.1:0"}} {
				t.Run(cfg.name+"/"+e.name+"/"+cmd[0], func(t *testing.T) {
					t.Parallel()
					out, code := runMain(t, e.env, append([]string{"--config", path}, cmd...)...)
					if code != 2 {
						t.Fatalf("exit %d, want 2:\n%s", code, out)
					}
					if want := cfg.key + ": environment variable CS_HUB_TOKEN " + e.why; !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
					if strings.Contains(out, "config OK") || strings.Contains(out, "serving streamable HTTP") {
						t.Errorf("went on:\n%s", out)
					}
				})
			}
		}
	}
}

// TestOpenBindNeedsAuth: `serve --http` beyond loopback without auth
// refuses to start (exit 2) unless --allow-unauthenticated says so; with
// auth it serves.
func TestOpenBindNeedsAuth(t *testing.T) {
	t.Parallel()
	open := fixture.WriteFile(t, "hub.yaml", "servers:\n  t: {builtin: time}\n")
	for _, flag := range []string{"--http", "--metrics"} {
		out, code := runMain(t, nil, "--config", open, "serve", flag, "0.0.0.0:0")
		if code != 2 || !strings.Contains(out, "--allow-unauthenticated") || !strings.Contains(out, "no auth") {
			t.Errorf("serve %s 0.0.0.0:0 without auth: exit %d, want 2 and the way out:\n%s", flag, code, out)
		}
	}
	self, _ := hubBinary()
	withAuth := fixture.WriteFile(t, "hub.yaml", "servers:\n  t: {builtin: time}\nauth: {tokens: [\"${CS_OPEN_TOKEN}\"]}\n")
	port := strings.Split(freeAddr(t), ":")[1]
	c := startChild(t, "hub", []string{envAsMain + "=1", "CS_OPEN_TOKEN=open-bind-token-5e1f"}, self, "--config", withAuth, "serve", "--http", "0.0.0.0:"+port)
	base := "http://127.0.0.1:" + port
	fixture.Eventually(t, 30*time.Second, "the hub serves with auth on 0.0.0.0", func() bool {
		return httpStatus(t, base+"/mcp", "") == http.StatusUnauthorized
	})
	if c.exited() {
		t.Fatalf("the hub exited:\n%s", c.logTail(20))
	}
}

// httpStatus POSTs an initialize to url with token ("" for none) and
// returns the status, or 0 when nothing answers.
func httpStatus(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// healthConfig is /healthz's config status, read with token.
func healthConfig(t *testing.T, base, token string) hub.ConfigStatus {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/healthz", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h gateway.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h.Config
}

// reloadChild is a `serve --http --watch-interval 20ms` of cfgPath with env.
type reloadChild struct {
	*child
	base string
}

func startWatchedHub(t *testing.T, cfgPath, bind string, env ...string) *reloadChild {
	t.Helper()
	self, _ := hubBinary()
	c := startChild(t, "hub", append(env, envAsMain+"=1"), self, "--config", cfgPath, "serve", "--watch-interval", "20ms", "--http", bind)
	_, port, _ := strings.Cut(bind, ":")
	h := &reloadChild{child: c, base: "http://127.0.0.1:" + port}
	fixture.Eventually(t, 30*time.Second, "the hub answers", func() bool {
		if c.exited() {
			t.Fatalf("the hub exited:\n%s", c.logTail(30))
		}
		resp, err := http.Get(h.base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return h
}

func (h *reloadChild) log() string {
	b, _ := os.ReadFile(h.logPath)
	return string(b)
}

// waitLog waits until the hub's log holds every one of want.
func (h *reloadChild) waitLog(t *testing.T, what string, want ...string) {
	t.Helper()
	fixture.Eventually(t, 20*time.Second, what, func() bool {
		log := h.log()
		for _, w := range want {
			if !strings.Contains(log, w) {
				return false
			}
		}
		return true
	})
}

// replace writes content to a new file renamed over path, as editors do.
func replace(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestReloadKeepsAuth: a reload to a config whose token expands empty,
// or (on a bind beyond loopback) to one without auth, is refused; the
// token in service still holds: a request without it gets 401.
func TestReloadKeepsAuth(t *testing.T) {
	t.Parallel()
	const token = "reload-token-8d2c41"
	env := []string{"CS_RELOAD_TOKEN=" + token}
	for _, tc := range []struct {
		name, bind, next, want string
	}{
		{"token var unset", freeAddr(t), "servers:\n  t: {builtin: time}\nauth: {tokens: [\"${CS_RELOAD_UNSET}\"]}\n",
			"auth.tokens[0]: environment variable CS_RELOAD_UNSET is not set"},
		{"auth removed on an open bind", "0.0.0.0:" + strings.Split(freeAddr(t), ":")[1], "servers:\n  t: {builtin: time}\n",
			"the config has no auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := filepath.Join(t.TempDir(), "hub.yaml")
			replace(t, cfg, "servers:\n  t: {builtin: time}\nauth: {tokens: [\"${CS_RELOAD_TOKEN}\"]}\n")
			h := startWatchedHub(t, cfg, tc.bind, env...)
			if got := httpStatus(t, h.base+"/mcp", ""); got != http.StatusUnauthorized {
				t.Fatalf("before the reload: %d without a token, want 401", got)
			}
			replace(t, cfg, tc.next)
			h.waitLog(t, "the reload refused", "config not applied, the running config stays", tc.want)
			if st := healthConfig(t, h.base, token); !strings.Contains(st.LastReloadError, tc.want) || st.Reloads != 0 {
				t.Errorf("/healthz config = %+v, want the refusal and no reload", st)
			}
			if got := httpStatus(t, h.base+"/mcp", ""); got != http.StatusUnauthorized {
				t.Errorf("after the refused reload: %d without a token, want 401", got)
			}
			if got := httpStatus(t, h.base+"/mcp", token); got != http.StatusOK {
				t.Errorf("after the refused reload: %d with the token, want 200", got)
			}
		})
	}
}

// TestReloadQuotesNothing: the config path turned into a symlink to a
// file of text lines, then a short ${VAR} value that fails to decode:
// both reloads are refused, and neither the hub's log, nor /healthz, nor
// `config check` shows the file's lines or the value.
func TestReloadQuotesNothing(t *testing.T) {
	t.Parallel()
	const marker = "QZ9marker"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hub.yaml")
	replace(t, cfg, "servers:\n  t: {builtin: time}\n")
	other := filepath.Join(dir, "other")
	var lines strings.Builder
	for i := range 20 {
		lines.WriteString("user" + string(rune('a'+i)) + ":$6$" + marker + "$hash:19000:0:99999:7:::\n")
	}
	lines.WriteString("free text " + marker + " with no colon\n")
	if err := os.WriteFile(other, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startWatchedHub(t, cfg, freeAddr(t), "CS_SHORT=ab"+marker[:6])

	tmp := filepath.Join(dir, "link.tmp")
	if err := os.Symlink(other, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cfg); err != nil {
		t.Fatal(err)
	}
	h.waitLog(t, "the symlinked file refused", "config not applied, the running config stays", "invalid YAML")
	st := healthConfig(t, h.base, "")
	if st.LastReloadError == "" || st.Reloads != 0 {
		t.Errorf("/healthz config = %+v, want the refusal", st)
	}
	checkOut, code := runMain(t, nil, "config", "check", "--config", cfg)
	if code != 2 {
		t.Errorf("config check of the symlinked file: exit %d, want 2\n%s", code, checkOut)
	}

	replace(t, cfg, "servers:\n  t: {builtin: time}\nmax_sessions: ${CS_SHORT}\n")
	h.waitLog(t, "the type error refused", "key max_sessions: expected a whole number")
	st2 := healthConfig(t, h.base, "")
	for what, s := range map[string]string{"log": h.log(), "/healthz": st.LastReloadError + "\n" + st2.LastReloadError, "config check": checkOut} {
		if strings.Contains(s, marker) || strings.Contains(s, marker[:6]) {
			t.Errorf("%s quotes the file or the variable:\n%s", what, s)
		}
	}
}

// TestConfigSizeCap: a config file over hub.MaxConfigBytes is refused at
// start (exit 2) and on reload (the running config stays).
func TestConfigSizeCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	writeBig := func(path string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("servers:\n  t: {builtin: time}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, config.MaxFileBytes+1); err != nil { // sparse: cheap to make
			t.Fatal(err)
		}
	}
	writeBig(big)
	const want = "larger than 4 MiB, the cap on a config file"
	for _, cmd := range [][]string{{"config", "check"}, {"serve", "--http", "127.0.0.1:0"}} {
		out, code := runMain(t, nil, append([]string{"--config", big}, cmd...)...)
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("%s of a file over the cap: exit %d, want 2 and %q:\n%s", cmd[0], code, want, out)
		}
	}

	cfg := filepath.Join(dir, "hub.yaml")
	replace(t, cfg, "servers:\n  t: {builtin: time}\n")
	h := startWatchedHub(t, cfg, freeAddr(t))
	writeBig(cfg + ".tmp")
	if err := os.Rename(cfg+".tmp", cfg); err != nil {
		t.Fatal(err)
	}
	h.waitLog(t, "the big file refused", "config not applied, the running config stays", want)
	if st := healthConfig(t, h.base, ""); !strings.Contains(st.LastReloadError, want) || st.Reloads != 0 {
		t.Errorf("/healthz config = %+v, want the refusal", st)
	}
	// The watcher goes on (TestWatcherReadsOnlyChanges: the big file is
	// reported once and never read).
	replace(t, cfg, "servers:\n  t: {builtin: time}\n  c: {builtin: calc}\n")
	h.waitLog(t, "the next change applied", "config applied")
}

//go:build unix

package gateway

// Upstream faults seen through the hub: real fixture processes that are
// killed, hang, write garbage or offer broken schemas, and what clients
// and /healthz see meanwhile. Helpers are prefixed "fh" (and reuse the
// "sec" ones of security_test.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestHubFaultHealth: /healthz shows each upstream's state (ready,
// starting, restarting, unhealthy, disabled), last error, restarts and
// last call latency.
func TestHubFaultHealth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := filepath.Join(dir, "up")
	os.WriteFile(flag, nil, 0o644)
	script := fmt.Sprintf(`if [ -e %q ]; then exec %q -name flaky -features; fi; echo "flaky is down" >&2; exit 1`, flag, fixture.Build(t))
	flaky := &config.Server{Upstream: config.Upstream{Command: "/bin/sh", Args: []string{"-c", script}}}
	flaky.Name = "flaky"
	off := fixture.StdioEntry(t, "off", "-tools", "x")
	off.Disabled = true
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "ok", "-features"), flaky, fixture.StdioEntry(t, "slow", "-tools", "s", "-start-delay", "30s"), fixture.StdioEntry(t, "dead", "-fail-start"), off)
	cfg.Restart.InitialBackoff = config.Duration(300 * time.Millisecond)
	cfg.Restart.MaxBackoff = config.Duration(300 * time.Millisecond)
	cfg.Restart.UnhealthyAfter = 3
	cfg.Restart.Cooldown = config.Duration(time.Minute)
	h, err := New(context.Background(), cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 3 * time.Second, Builtin: builtins(cfg, quietLogger)}, OpenStore: openStore})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h.HTTPHandler(nil))
	defer srv.Close()
	health := func() map[string]ServerInfo {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var hl Health
		if err := json.NewDecoder(resp.Body).Decode(&hl); err != nil {
			t.Fatal(err)
		}
		out := map[string]ServerInfo{}
		for _, s := range hl.Servers {
			out[s.Name] = s
		}
		if hl.Status != "degraded" {
			t.Errorf("status %q with servers down", hl.Status)
		}
		return out
	}
	waitFor(t, "dead unhealthy, ok and flaky ready", func() bool {
		s := health()
		return s["dead"].State == "unhealthy" && s["ok"].State == "ready" && s["flaky"].State == "ready"
	})
	c := fixture.ConnectCounting(t, h.hub)
	if text, _ := c.Call(t, "ok__sleep", map[string]any{"ms": 120}); text != "slept" {
		t.Fatalf("ok__sleep: %q", text)
	}
	pid := c.PID(t, "flaky__pid")
	os.Remove(flag)
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "flaky restarting", func() bool { return health()["flaky"].State == "restarting" })
	s := health()
	if s["flaky"].Restarts != 1 || !strings.Contains(s["flaky"].LastError, "connection ended") {
		t.Errorf("flaky: %+v", s["flaky"])
	}
	if s["slow"].State != "starting" {
		t.Errorf("slow: %+v, want starting", s["slow"])
	}
	if s["off"].State != "disabled" || s["off"].Tools != 0 {
		t.Errorf("off: %+v", s["off"])
	}
	if s["dead"].LastError == "" || s["dead"].Tools != 0 {
		t.Errorf("dead: %+v", s["dead"])
	}
	if ms := s["ok"].LatencyMillis; ms < 100 || ms > 5000 {
		t.Errorf("ok: last_call_ms = %v, want about 120", ms)
	}
	if s["ok"].ConnectMillis <= 0 || s["ok"].Tools == 0 {
		t.Errorf("ok: %+v", s["ok"])
	}
	waitFor(t, "flaky unhealthy", func() bool { return health()["flaky"].State == "unhealthy" })
	if last := health()["flaky"].LastError; !strings.Contains(last, "flaky is down") {
		t.Errorf("flaky last error = %q", last)
	}
}

func fhStatus(h *Gateway, name string) upstream.Status {
	for _, st := range h.hub.Upstreams() {
		if st.Name == name {
			return st
		}
	}
	return upstream.Status{}
}

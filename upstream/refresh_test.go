package upstream

import (
	"slices"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestRefreshInterval: a server that adds a tool without list_changed is
// re-listed on refresh_interval; the listener hears of the change once,
// and of the refreshes that found nothing new never.
func TestRefreshInterval(t *testing.T) {
	t.Parallel()
	u, l, _ := start(t, config.Upstream{Name: "quiet", Command: fixture.Build(t), RefreshInterval: config.Duration(config.MinRefreshInterval),
		Args: []string{"-silent", "-tools", "a", "-add-tool-after", "600ms", "-add-tool", "b"}}, Options{})
	waitReady(t, u)
	toolNames := func() []string { return names(u.Lists().Tools, func(x *mcp.Tool) string { return x.Name }) }
	fixture.Eventually(t, 30*time.Second, "tool b found by a refresh", func() bool { return slices.Equal(toolNames(), []string{"a", "b"}) })
	fixture.Eventually(t, 30*time.Second, "UpstreamChanged for the change", func() bool { return l.changeCount() >= 2 })
	// Two more refreshes that find nothing new: no more UpstreamChanged.
	after := u.Status().Relists
	fixture.Eventually(t, 30*time.Second, "two more refreshes", func() bool { return u.Status().Relists >= after+2 })
	if n := l.changeCount(); n != 2 {
		t.Errorf("UpstreamChanged called %d times, want 2 (connect, the one change)", n)
	}
}

func TestRefreshIntervalValidate(t *testing.T) {
	t.Parallel()
	cfg := config.Upstream{Name: "x", Command: "x", RefreshInterval: config.Duration(time.Millisecond)}
	if err := cfg.Validate(); err == nil {
		t.Error("a 1ms refresh_interval was accepted")
	}
	cfg.RefreshInterval = config.Duration(time.Minute)
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestWatcherReadsOnlyChanges: polls of an unchanged file only stat it; a
// change is read (twice: it must hold still) and applied; a file over the
// cap is never read and is refused once however often it is polled.
func TestWatcherReadsOnlyChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hub.yaml")
	write := func(content string, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		// Older than racyWindow: its time and size say it all.
		at := time.Now().Add(-age)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("servers:\n  t: {builtin: time}\n", time.Hour)
	w := newConfigWatcher(path)
	cfg, err := config.Load(path, builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	var logBuf fixture.Log // kept, not mirrored to the test log
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	g, err := gateway.New(ctx, cfg, gateway.Options{Hub: hub.Options{Logger: log, Builtin: hubBuiltins(cfg, log)}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := g.Hub()
	w.hub, w.log = g, log

	polls := func(what string, n, wantReads int) {
		t.Helper()
		before := w.reads
		for range n {
			w.poll(ctx)
		}
		if got := w.reads - before; got != wantReads {
			t.Errorf("%s: %d polls read the file %d times, want %d", what, n, got, wantReads)
		}
	}
	polls("unchanged", 20, 0)

	write("servers:\n  u: {builtin: time}\n", 30*time.Minute) // same size, new content and time
	polls("changed", 2, 2)
	if st := h.ConfigStatus(); st.Reloads != 1 || st.LastReloadError != "" {
		t.Fatalf("the change was not applied: %+v\n%s", st, logBuf.String())
	}
	polls("unchanged after the reload", 20, 0)

	if err := os.Truncate(path, config.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-10 * time.Minute)
	os.Chtimes(path, at, at)
	polls("over the cap", 20, 0)
	const tooBig = "larger than 4 MiB"
	if n := strings.Count(logBuf.String(), tooBig); n != 1 {
		t.Errorf("the file over the cap was reported %d times, want once:\n%s", n, logBuf.String())
	}
	if st := h.ConfigStatus(); st.Reloads != 1 || !strings.Contains(st.LastReloadError, tooBig) {
		t.Errorf("config status = %+v, want the refusal and the running config", st)
	}
}

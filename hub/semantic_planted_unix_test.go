//go:build unix

package hub

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/embed"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestSemanticCacheFIFO: a FIFO planted at the embeddings cache path used
// to hang the hub's start in the cache's open (and nothing, SIGTERM
// included, ended it). Now the start finishes, a warning names the path
// and why, and the vectors are embedded afresh.
func TestSemanticCacheFIFO(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, map[string]string{"memorize": "memory"})
	fx := fixture.NewServers()
	fx.Define("notes", notesTools...)
	state := t.TempDir()
	path := embed.CachePath(state, config.EmbeddingsOllama+"/test-embed")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	log := fixture.NewLog(t)
	cfg := semanticConfig(srv, config.EmbeddingsOllama, time.Second)

	type started struct {
		h   *Hub
		err error
	}
	done := make(chan started, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := New(ctx, cfg, Options{Logger: slog.New(slog.NewTextHandler(log, nil)), StartupWait: 20 * time.Second, Builtin: fx.Builtin, StateDir: state})
		done <- started{h, err}
	}()
	var h *Hub
	select {
	case s := <-done:
		if s.err != nil {
			t.Fatalf("New: %v", s.err)
		}
		h = s.h
		t.Cleanup(func() { h.Close() })
	case <-time.After(20 * time.Second):
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close() // let the stuck open return, so the test can end
		}
		t.Fatal("the hub's start blocked on a FIFO at the embeddings cache path")
	}
	log.WaitFor(t, "a warning about the refused cache", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "vector cache") && strings.Contains(s, path) && strings.Contains(s, "not a regular file")
	})
	vectorsReady(t, h)
}

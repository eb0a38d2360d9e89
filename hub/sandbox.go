package hub

import (
	"path/filepath"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
	"github.com/mcp-hub/mcp-hub/sandbox"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// sandboxFor is what confines cfg's sandboxed stdio servers. It hides the
// hub's own files from them: this config file, the state folder (tokens,
// pins, vectors, the other servers' homes) and the audit log with its
// rotated files.
func (h *Hub) sandboxFor(cfg *config.Config) upstream.Sandboxer {
	state := h.stateDir
	if state == "" {
		state, _ = tokenstore.DefaultDir() // "": Wrap says a server cannot be sandboxed without one
	}
	var hidden []string
	for _, p := range []string{cfg.Path, state, cfg.Audit.File} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		hidden = append(hidden, p)
	}
	if cfg.Audit.File != "" {
		rotated, _ := filepath.Glob(cfg.Audit.File + ".*")
		hidden = append(hidden, rotated...)
	}
	return sandbox.New(sandbox.Options{Hidden: hidden, StateDir: state, Logger: h.log})
}

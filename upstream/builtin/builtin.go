// Package builtin provides small MCP servers that run inside the hub process.
//
// A builtin is an ordinary go-sdk *mcp.Server: the hub connects to it over an
// in-memory transport exactly as it would connect to a subprocess, so the
// catalog, index and routing code never special-case it. Builtins exist so
// that the bundled hub.yaml works on a fresh machine with nothing installed;
// each is deliberately small, offline and deterministic enough to test.
//
// Every call to New returns a fresh server. Builtins hold no state of their
// own beyond what New builds (the notes store is a file, guarded so that
// several servers over the same file stay consistent).
//
// Tool descriptions are written for retrieval: the hub finds deferred tools
// by BM25 search over names, descriptions and parameter descriptions, so they
// name the task in the words a user would use.
package builtin

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is reported in each builtin's serverInfo.
const version = "1.0.0"

// protocolVersions restricts what builtins negotiate. The 2026-07-28 draft
// changes how list-changed notifications and logging are delivered (see
// NOTES.md); the hub speaks 2025-11-25 and older, so the builtins do too.
func protocolVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// entry describes one builtin.
type entry struct {
	description string
	build       func(env map[string]string) (*mcp.Server, error)
}

// registry returns the table of builtins. It is built on each call so the
// package holds no mutable state.
func registry() map[string]entry {
	return map[string]entry{
		"time": {
			description: "Current time in any IANA timezone, timezone conversion, date differences, date arithmetic and day of week (offline tz database).",
			build:       newTimeServer,
		},
		"calc": {
			description: "Safe arithmetic expression evaluator, unit conversion (length, mass, temperature, volume, data size, time) and percentage helpers.",
			build:       newCalcServer,
		},
		"notes": {
			description: "Personal notes stored in a local JSON file (NOTES_FILE): add, list, search, read, update and delete; notes are also MCP resources note://{id}.",
			build:       newNotesServer,
		},
		"text": {
			description: "Text utilities: word and character counts, case conversion, slugify, base64 and URL encoding, UUID generation and hashing.",
			build:       newTextServer,
		},
	}
}

// New returns a fresh *mcp.Server for the named builtin. env carries the
// server's configured environment (already expanded), e.g. NOTES_FILE.
func New(name string, env map[string]string) (*mcp.Server, error) {
	e, ok := registry()[name]
	if !ok {
		return nil, fmt.Errorf("unknown builtin server %q (available: %s)", name, strings.Join(Names(), ", "))
	}
	if env == nil {
		env = map[string]string{}
	}
	s, err := e.build(env)
	if err != nil {
		return nil, fmt.Errorf("builtin %q: %w", name, err)
	}
	return s, nil
}

// Names returns the names of all builtins, sorted.
func Names() []string {
	r := registry()
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Describe returns a one-line description of the named builtin, or "" if
// there is no such builtin.
func Describe(name string) string {
	return registry()[name].description
}

// newServer creates the go-sdk server shared by all builtins.
func newServer(name, instructions string, opts *mcp.ServerOptions) *mcp.Server {
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	opts.Instructions = instructions
	opts.SupportedProtocolVersions = protocolVersions()
	return mcp.NewServer(&mcp.Implementation{Name: name, Title: "mcp-hub builtin: " + name, Version: version}, opts)
}

// textResult builds a tool result whose text is shown to the model; the
// structured output (if any) is added by mcp.AddTool from the typed output.
func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// readOnly marks a tool as having no side effects, which lets clients skip
// confirmation prompts.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

func ptr[T any](v T) *T { return &v }

// ctxErr is used by handlers that loop, so a cancelled call stops promptly.
func ctxErr(ctx context.Context) error { return ctx.Err() }

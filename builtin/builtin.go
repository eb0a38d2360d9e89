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
// Builtins run inside the hub's process, so a bug in one must not become a
// crash of the hub. New builds every server behind one boundary
// (boundary.go): a panic in any handler becomes an error for that one
// request, and a result larger than Options.MaxResultBytes becomes an error
// naming the limit, so the in-memory connection to the server stays up.
// Within the servers, every loop and allocation sized by a client's input is
// bounded, and past a bound the call fails with an error that names the
// limit and the fix (the limits are listed in docs/configuration.md, "Builtin servers").
//
// Tool descriptions are written for retrieval: the hub finds deferred tools
// by BM25 search over names, descriptions and parameter descriptions, so they
// name the task in the words a user would use.
package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// version is reported in each builtin's serverInfo.
const version = "1.0.0"

// protocolVersions restricts what builtins negotiate. The 2026-07-28 draft
// changes how list-changed notifications and logging are delivered (see
// docs/stateless-mcp.md); the hub speaks 2025-11-25 and older, so the builtins do too.
func protocolVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// entry describes one builtin.
type entry struct {
	description string
	build       func(env map[string]string, opts Options) (*mcp.Server, error)
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

// DefaultMaxResultBytes is the default bound on one builtin result, as
// encoded JSON. It stays below the 16 MiB frame limit of go-sdk's transports
// with room to spare.
const DefaultMaxResultBytes = 8 << 20

// Options tune the servers New makes.
type Options struct {
	// Logger receives one record, with the stack, for each panic the
	// boundary turns into an error (default slog.Default()). Nothing of a
	// panic but the tool's name reaches the client.
	Logger *slog.Logger
	// MaxResultBytes bounds one result (a tool call, a resource read, a
	// prompt, a list page) as encoded JSON; a larger one fails that request
	// with an error naming the limit. 0 means DefaultMaxResultBytes; more
	// than MaxResultFrame means MaxResultFrame.
	MaxResultBytes int

	// inferSchemas makes the servers infer their tools' schemas instead of
	// taking the generated ones (schemas.go): for the test that generates
	// them.
	inferSchemas bool
}

// MaxResultFrame is the most MaxResultBytes can be: the hub reads a builtin
// over go-sdk's in-memory transport, whose frames end at 16 MiB, and a
// larger frame would end the connection rather than the call.
const MaxResultFrame = mcp.DefaultMaxLineLength - 64<<10

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	o.MaxResultBytes = min(o.MaxResultBytes, MaxResultFrame)
	return o
}

// New returns a fresh *mcp.Server for the named builtin, behind the
// boundary that turns its panics and oversized results into errors. env
// carries the server's configured environment (already expanded), e.g.
// NOTES_FILE.
func New(name string, env map[string]string, opts Options) (*mcp.Server, error) {
	e, ok := registry()[name]
	if !ok {
		return nil, fmt.Errorf("unknown builtin server %s (available: %s)", quote(name), strings.Join(Names(), ", "))
	}
	if env == nil {
		env = map[string]string{}
	}
	opts = opts.withDefaults()
	s, err := e.build(env, opts)
	if err != nil {
		return nil, fmt.Errorf("builtin %q: %w", name, err)
	}
	// Installed last, so that it is the outermost middleware and also
	// covers the ones a builtin adds itself (notes answers resources/list).
	guard(s, name, opts)
	return s, nil
}

// Maker returns New with opts, in the form a hub takes it
// (hub.Options.Builtin). The program hands the builtins to the hub
// explicitly: the hub imports nothing of this package, so a hub built
// without them (a test's fixture servers, an embedder's own) links none.
func Maker(opts Options) func(name string, env map[string]string) (*mcp.Server, error) {
	return func(name string, env map[string]string) (*mcp.Server, error) {
		return New(name, env, opts)
	}
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

// quoteRunes is how much of a client's string an error message quotes.
const quoteRunes = 60

// quote returns s in Go quotes for an error message, cut after quoteRunes
// characters (with its length in bytes), so that an error never echoes a
// multi-megabyte argument back.
func quote(s string) string {
	i, n := 0, 0
	for i < len(s) && n < quoteRunes {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	if i == len(s) {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s (%d bytes)", strconv.Quote(s[:i]+"…"), len(s))
}

// ctxErr is used by handlers that loop over a client's input, so that a
// cancelled or timed-out call stops promptly.
func ctxErr(ctx context.Context) error { return ctx.Err() }

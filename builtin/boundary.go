package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// guard installs the boundary of a builtin server: a receiving middleware
// around every method the server handles (tools, resources, prompts,
// completions, subscriptions, notifications). It makes three promises:
//
//   - A panic in a handler fails that request only: tools/call gets an
//     isError result naming the tool, any other method a JSON-RPC internal
//     error (-32603). The panic is logged once, with its stack, on
//     opts.Logger; the client learns nothing but that the call failed.
//   - A result larger than opts.MaxResultBytes (as encoded JSON) fails that
//     request with an error naming the limit. The hub reads a builtin over
//     an in-memory transport with a 16 MiB frame limit: a larger frame would
//     end the connection, and with it every session's calls to the server.
//   - A tools/call result that cannot be encoded, or a handler's error that
//     the SDK would send as a bare JSON-RPC error, becomes an isError result
//     naming the tool, as MCP asks for tool failures.
//
// Everything is per request, so the server, its other calls and its
// connection to the hub go on.
func guard(s *mcp.Server, name string, opts Options) {
	b := boundary{server: name, opts: opts}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if v := recover(); v != nil {
					res, err = b.panicked(method, req, v, debug.Stack())
				}
			}()
			res, err = next(ctx, method, req)
			return b.check(method, req, res, err)
		}
	})
}

type boundary struct {
	server string
	opts   Options
}

// toolName is the tool a tools/call request names, or "".
func toolName(req mcp.Request) string {
	if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
		return r.Params.Name
	}
	return ""
}

// what names the request in errors and logs: "tool 'text.slugify'" or
// "resources/read on builtin 'notes'".
func (b boundary) what(method string, req mcp.Request) string {
	if method == "tools/call" {
		return fmt.Sprintf("tool '%s.%s'", b.server, toolName(req))
	}
	return fmt.Sprintf("%s on builtin '%s'", method, b.server)
}

func (b boundary) panicked(method string, req mcp.Request, v any, stack []byte) (mcp.Result, error) {
	b.opts.Logger.Error("builtin panicked; the request fails, the server goes on",
		"server", b.server, "method", method, "tool", toolName(req), "panic", fmt.Sprint(v), "stack", string(stack))
	msg := fmt.Sprintf("internal error in builtin %s (a bug in mcp-hub; it was logged): the call failed, the server is still running", b.what(method, req))
	if method == "tools/call" {
		return toolError(msg), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// check applies the result limit, and turns what a tools/call must not
// answer with (a bare error, an unencodable result) into an isError result.
func (b boundary) check(method string, req mcp.Request, res mcp.Result, err error) (mcp.Result, error) {
	if err != nil {
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) {
			if method == "tools/call" {
				return toolError(clipText(fmt.Sprintf("builtin %s failed: %v", b.what(method, req), err))), nil
			}
			return nil, err
		}
		if len(wire.Message) > maxErrorText || len(wire.Data) > maxErrorText || len(wire.Data) > 0 && !json.Valid(wire.Data) {
			// A JSON-RPC error quoting a multi-megabyte argument is cut like
			// a tool's. The SDK's "resource not found" quotes the URI in
			// its data with Go's %q, which is not JSON for every string
			// (\a, \x01): such data could not be encoded, and the request
			// would never be answered.
			clipped := *wire
			clipped.Message = clipText(wire.Message)
			if len(wire.Data) > maxErrorText || !json.Valid(wire.Data) {
				clipped.Data = nil
			}
			return nil, &clipped
		}
		return nil, err
	}
	if res == nil {
		return res, nil
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		clipErrorText(r)
	}
	size, ok := encodedSize(res)
	if !ok {
		data, err := json.Marshal(res)
		if err != nil {
			return b.fail(method, fmt.Sprintf("builtin %s produced a result that cannot be encoded as JSON (a bug in mcp-hub): %v", b.what(method, req), err))
		}
		size = len(data)
	}
	if size > b.opts.MaxResultBytes {
		return b.fail(method, fmt.Sprintf("the result of builtin %s is %s, over the %s limit on one result (max_result_bytes): ask for less, e.g. a shorter text or a smaller limit",
			b.what(method, req), byteSize(size), byteSize(b.opts.MaxResultBytes)))
	}
	return res, nil
}

func (b boundary) fail(method, msg string) (mcp.Result, error) {
	if method == "tools/call" {
		return toolError(msg), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// encodedSize is the size of a tool result made of text and structured
// content (every builtin's) as encoding/json writes it, counted without
// encoding it: a multi-megabyte result is not encoded twice. ok is false
// for other results, which the caller measures by encoding them. The count
// allows a little for keys and punctuation, so it may exceed the true size
// by a few hundred bytes, never fall short of it.
func encodedSize(res mcp.Result) (n int, ok bool) {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r.Meta != nil {
		return 0, false
	}
	const overhead = 128 // keys, type tags, isError, commas
	n = overhead
	for _, c := range r.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || tc.Meta != nil || tc.Annotations != nil {
			return 0, false
		}
		n += jsonStringLen(tc.Text) + overhead
	}
	switch sc := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		// Compacted again on the way out, with <, > and & escaped (as
		// \u003c) and U+2028, U+2029 too.
		n += len(sc) + 5*strings.Count(string(sc), "<") + 5*strings.Count(string(sc), ">") + 5*strings.Count(string(sc), "&") +
			3*strings.Count(string(sc), "\u2028") + 3*strings.Count(string(sc), "\u2029")
	default:
		return 0, false
	}
	return n, true
}

// jsonStringLen is len(json.Marshal(s)), as encoding/json escapes: quotes,
// backslashes and \n-style controls take two bytes; other controls, <, >,
// &, U+2028, U+2029 and each invalid UTF-8 byte (as \ufffd) six.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// maxErrorText bounds the text of an isError result. Errors quote what they
// reject, and the SDK's schema validation quotes a rejected value whole: a
// multi-megabyte argument must not come back in the error.
const maxErrorText = 2 << 10

func clipErrorText(r *mcp.CallToolResult) {
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc.Text = clipText(tc.Text)
		}
	}
}

// clipText cuts s after maxErrorText bytes (at a character boundary),
// saying how much it left out.
func clipText(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes not shown)", s[:cut], len(s)-cut)
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// byteSize prints n bytes for people: "8 MiB", "12.3 MiB", "900 KiB", "17 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

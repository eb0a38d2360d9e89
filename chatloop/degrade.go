package chatloop

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
)

// Degrading. When the hub or an upstream fails during a turn, the turn is
// not aborted: the user is told in one line (Observer.Degraded; the
// Degraded field of --json and POST /v1/chat) and the model is asked to
// answer from what it has, without tools, for the rest of the turn. The
// next turn tries the tools again.
//
// A failure is:
//   - the hub session failing: listing tools, or a tool call that got no
//     MCP answer at all (the connection ended) rather than a result or a
//     JSON-RPC error;
//   - a tool whose upstream server is down: its call failed and the hub
//     reports the server unavailable, through ServerHealth when the Hub
//     has it, or in the hub's own words in the error result (the health
//     check can run before the hub has noticed the server's end).
//
// A tool that merely returns an error result is not a failure: the model
// reads the error and fixes its call.

// ServerHealth is what a Hub may also offer: whether an upstream server
// is unavailable right now.
type ServerHealth interface {
	ServerDown(server string) bool
}

// unavailableResult matches the hub's error result for a call to a server
// that is not connected (upstream.UnavailableError): "Error: server 'NAME'
// is restarting (...)", and the same for the other states of a server
// that is down.
var unavailableResult = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Error: server '([^']*)' is (restarting|unhealthy|connecting|closed|needs_login|needs login|disabled|failed)\b`)
})

// hubFailure reports whether err from a tool call means the hub session
// itself failed.
func hubFailure(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var rpc *jsonrpc.Error
	return !errors.As(err, &rpc)
}

// failure returns why the round's tool calls mean the turn must go on
// without tools, or "".
func (c *Chat) failure(calls []ToolCall, results []ToolResult, hubErrs []error) string {
	for i, err := range hubErrs {
		if err != nil {
			return fmt.Sprintf("the hub failed during tool call %s (%s)", calls[i].Name, oneLine(err.Error()))
		}
	}
	health, _ := c.session.hub.(ServerHealth)
	for i, r := range results {
		if !r.IsError {
			continue
		}
		name := toolOfCall(calls[i])
		server := c.session.serverOf(name)
		text := resultText(r.Parts, false)
		if m := unavailableResult().FindStringSubmatch(text); m != nil && m[1] == server {
			return fmt.Sprintf("server %s failed during tool call %s (%s)", server, name, oneLine(text))
		}
		if health != nil && server != hubServer && health.ServerDown(server) {
			return fmt.Sprintf("server %s is down (tool call %s: %s)", server, name, oneLine(text))
		}
	}
	return ""
}

// degradedNote is added to the system prompt of a degraded turn's calls.
func degradedNote(reason string) string {
	return "\n\nTools are unavailable for the rest of this turn: " + reason + ". Do not call tools; answer the user from what you already have, and say what you could not do."
}

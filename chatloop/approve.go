package chatloop

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
)

// Approval. Tools that change things can be made to wait for the user's
// approval before they run. A tool needs approval when its annotations
// say destructiveHint: true, or when chat.approve_tools names it (exact
// names or path.Match globs); a call through call_tool is judged by the
// tool it runs, and one whose tool the session does not list needs
// approval (its annotations are unknown). The level (chat.approve) says
// when to ask:
//
//   - off: never; the tools run.
//   - on_miss: unless the tool was approved for the whole chat ("always")
//     before.
//   - always: before every call ("always" answers are not remembered).
//
// Who answers is the Approver: the REPL asks y/n/always on the terminal,
// -p refuses unless --yes, and the HTTP API returns the calls as pending
// approvals that the client answers in its next request, each by an id
// the hub issued for it (apiapprove.go). Every call of a round is decided
// before any of them runs. A refused call goes back to the model as an
// error result saying why, and, when nobody could be asked, how the user
// can allow it (Options.AllowHint).

// Decision is an answer to an approval request.
type Decision int

const (
	// Refuse: the user said no; the call does not run and the model is
	// told.
	Refuse Decision = iota
	// Allow runs this call.
	Allow
	// AllowAlways runs this call and, under on_miss, every later call of
	// the same tool in this chat without asking.
	AllowAlways
	// Pending stops the turn: the call waits for an answer from outside
	// (the HTTP API's pending approvals).
	Pending
	// Unasked: nobody could be asked (-p without --yes, no Approver); the
	// call does not run and the model is told how the user can allow it.
	Unasked
)

// DefaultAllowHint is Options.AllowHint when it is empty.
const DefaultAllowHint = "To allow such tools, the user can set chat.approve: off in the hub's config."

// ApprovalRequest is one call waiting for approval.
type ApprovalRequest struct {
	Call ToolCall
	// Tool is the tool the call runs (call_tool's target).
	Tool string
	// Why says what makes the tool need approval.
	Why string
	// OfferAlways is true under on_miss, where an "always" answer counts.
	OfferAlways bool
	// Conversation is the history up to and including the assistant
	// message that made the call; the Approver must not change it.
	Conversation []Message
}

// Approver answers approval requests.
type Approver func(ctx context.Context, req ApprovalRequest) Decision

// PendingApproval is a call the HTTP API's client must approve or refuse.
type PendingApproval struct {
	// ID is what the client answers with: issued by the hub for this call
	// alone (apiapprove.go). CallID is the provider's id, shown only.
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Why       string `json:"why"`
}

// PendingError ends a turn whose calls wait for approval; the history
// keeps the assistant message with the calls, so the turn can resume.
type PendingError struct {
	Calls []PendingApproval
}

func (e *PendingError) Error() string {
	names := make([]string, len(e.Calls))
	for i, c := range e.Calls {
		names[i] = c.Tool
	}
	return "tool calls waiting for approval: " + strings.Join(names, ", ")
}

// needsApproval says why a call needs approval, or "".
func (c *Chat) needsApproval(call ToolCall) string {
	if c.opts.Approve == "" || c.opts.Approve == config.ApproveOff {
		return ""
	}
	name := toolOfCall(call)
	for _, pattern := range c.opts.ApproveTools {
		if ok, _ := path.Match(pattern, name); ok || pattern == name {
			return "named in chat.approve_tools"
		}
	}
	if name == searchToolName || name == callToolName {
		return ""
	}
	t := c.session.tool(name)
	switch {
	case t == nil:
		return "its annotations are unknown (it is not in the session's tool list)"
	case t.Annotations != nil && t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint:
		return "it may change or delete data (destructiveHint)"
	}
	return ""
}

// approve decides every call of a round before any runs. refusals[i] is
// "" when call i may run, else the error text the model gets instead.
func (c *Chat) approve(ctx context.Context, calls []ToolCall) (refusals []string, err error) {
	refusals = make([]string, len(calls))
	// asked are the calls put to the Approver. If any stays pending, none
	// of the round runs, so all of them are pending again: an answer the
	// HTTP API's client gave to one of them is spent, and it must see
	// everything that still waits.
	var asked []PendingApproval
	anyPending := false
	for i, call := range calls {
		why := c.needsApproval(call)
		tool := toolOfCall(call)
		if why == "" || (c.opts.Approve == config.ApproveOnMiss && c.approved[tool]) {
			continue
		}
		asked = append(asked, PendingApproval{CallID: call.ID, Tool: tool, Arguments: string(call.Arguments), Why: why})
		d := Unasked
		if c.opts.Approver != nil {
			d = c.opts.Approver(ctx, ApprovalRequest{Call: call, Tool: tool, Why: why,
				OfferAlways: c.opts.Approve == config.ApproveOnMiss, Conversation: c.history})
		}
		switch d {
		case AllowAlways:
			if c.opts.Approve == config.ApproveOnMiss {
				if c.approved == nil {
					c.approved = map[string]bool{}
				}
				c.approved[tool] = true
			}
		case Allow:
		case Pending:
			anyPending = true
		case Unasked:
			refusals[i] = fmt.Sprintf("Error: %s was not run: it needs approval (%s) and nobody could be asked. %s Do not call it again; tell the user what you could not do and how to allow it.",
				tool, why, cmp.Or(c.opts.AllowHint, DefaultAllowHint))
		default:
			refusals[i] = fmt.Sprintf("Error: the user did not approve running %s. Do not call it again unless the user asks; say what you could not do.", tool)
		}
		c.opts.Logger.Info("tool approval", "tool", tool, "decision", d)
	}
	if anyPending {
		return nil, &PendingError{Calls: asked}
	}
	return refusals, nil
}

// refused is the result of a call that was not approved.
func refused(call ToolCall, text string) ToolResult {
	return ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Parts: []Part{{Type: PartText, Text: text}}}
}

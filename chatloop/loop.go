package chatloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
)

// DefaultSystemPrompt is used when neither --system nor the model's system
// is set. Most hub tools are deferred, so a model that does not know about
// search_tools would conclude it has no tools at all.
const DefaultSystemPrompt = `You are a helpful assistant connected to tools through mcp-hub.
Only some tools are listed at first. To find more, call search_tools with a short query describing the task, or for a task of several steps with queries, one short query per step (or server_name to load a whole server, or tool_names for exact names). Tools it finds are loaded and offered to you directly from your next step on; call them by name.
If a tool you loaded is not in your tool list, call it through call_tool with {"name": "<tool name>", "arguments": {...}}.
If a tool returns an error, read it and fix the call or try another tool. Answer directly when no tool is needed.`

// Observer receives progress of a turn as it happens; any field may be nil.
// Callbacks run on the chat's goroutine except ToolStart and ToolDone,
// which run on the goroutine of each call when calls run in parallel.
type Observer struct {
	// Text is answer text as it streams (only when Options.Stream).
	Text      func(delta string)
	ToolStart func(call ToolCall)
	ToolDone  func(call ToolCall, result ToolResult, took time.Duration)
	// Degraded is called once when a turn goes on without tools because
	// the hub or an upstream failed (see degrade.go).
	Degraded func(reason string)
}

// Options configure a Chat; [Config.NewChat] fills them from hub.yaml.
type Options struct {
	Provider Provider
	// ModelName is the name in hub.yaml's models section (for messages);
	// Model is the provider's model id.
	ModelName string
	Model     string
	System    string
	// Template renders the system prompt on every model call from the
	// tools offered; used only when System is empty.
	Template *Template
	// Temperature and MaxTokens are passed when set (nil / 0 = provider
	// default).
	Temperature       *float64
	MaxTokens         int
	MaxRounds         int
	ParallelToolCalls bool
	// ToolResultFormat is chat.tool_result_format ("" = result).
	ToolResultFormat string
	// History is chat.history: the budget applied before each model call.
	History config.ChatHistory
	// ResponseSchema makes every final answer a JSON object valid against
	// it (structured.go).
	ResponseSchema *ResponseSchema
	// Approve is the approval level (approve.go; "" = off), ApproveTools
	// the names that need approval besides destructive tools, Approver
	// who answers. AllowHint tells the model, when a call was refused
	// because nobody could be asked, how the user can allow it
	// ("" = DefaultAllowHint).
	Approve      string
	ApproveTools []string
	Approver     Approver
	AllowHint    string
	// Preselector picks each turn's tools by embeddings (preselect.go);
	// nil offers the session's tools.
	Preselector *Preselector
	// Stream asks the provider to stream; the text goes to Observer.Text.
	Stream   bool
	Observer Observer
	Logger   *slog.Logger
}

// Chat is one conversation: history and stats, over one hub session. A Chat
// is not safe for concurrent use; one turn runs at a time.
type Chat struct {
	opts    Options
	session *Session
	history []Message
	stats   Stats
	// turnStart is the index of the current turn's user message; trimming
	// moves it.
	turnStart int
	// counts caches the estimated tokens of each history message.
	counts  []int
	counter tokenCounter
	// degraded is why the current (or last) turn went on without tools.
	degraded string
	// approved are the tools approved for the whole chat (on_miss).
	approved map[string]bool
	// offer is the current turn's preselection (nil: every tool), and
	// listedAtStart the session's tools when the turn began.
	offer, listedAtStart map[string]bool
}

// Degraded says why the last turn was answered without tools, or "".
func (c *Chat) Degraded() string { return c.degraded }

// New starts an empty conversation on session.
func New(session *Session, opts Options) *Chat {
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = config.DefaultChatMaxRounds
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Chat{opts: opts, session: session}
}

// History returns a copy of the conversation so far.
func (c *Chat) History() []Message { return slices.Clone(c.history) }

// SetHistory replaces the conversation (POST /v1/chat sends it whole).
func (c *Chat) SetHistory(h []Message) { c.history, c.counts = slices.Clone(h), nil }

// Reset forgets the conversation. Tools already loaded in the hub session
// stay loaded.
func (c *Chat) Reset() { c.history, c.counts = nil, nil }

// Stats returns a snapshot of the chat's stats.
func (c *Chat) Stats() Stats { return c.stats.clone() }

// Options returns the chat's options.
func (c *Chat) Options() Options { return c.opts }

// MaxRoundsError reports a turn stopped by chat.max_rounds while the model
// still wanted tools.
type MaxRoundsError struct {
	Rounds int
	// Partial is the last text the model wrote, if any.
	Partial string
}

func (e *MaxRoundsError) Error() string {
	return fmt.Sprintf("stopped after %d model calls without a final answer (the model kept calling tools); raise chat.max_rounds in hub.yaml or ask a narrower question", e.Rounds)
}

// Send runs one user turn to its final answer. On error (provider failure,
// max_rounds, cancellation) the history is rolled back to before the turn,
// so the next turn starts from a consistent conversation; tools loaded
// meanwhile stay loaded in the hub session and stats keep what was spent
// (and earlier messages chat.history trimmed stay trimmed).
func (c *Chat) Send(ctx context.Context, text string) (string, error) {
	start := time.Now()
	defer func() { c.stats.WallTime += time.Since(start) }()

	c.turnStart = len(c.history)
	c.history = append(c.history, Message{Role: RoleUser, Content: text})
	c.preselect(ctx, text)
	answer, err := c.run(ctx)
	if err != nil && !isPending(err) {
		c.history = c.history[:c.turnStart]
		return answer, err
	}
	return answer, err
}

// Continue runs the loop on the history as it is; POST /v1/chat uses it.
// Its last message is from the user, or an assistant message whose tool
// calls waited for approval: they are decided and run first.
func (c *Chat) Continue(ctx context.Context) (string, error) {
	start := time.Now()
	defer func() { c.stats.WallTime += time.Since(start) }()
	n := len(c.history)
	if n == 0 || (c.history[n-1].Role != RoleUser && !waitsForTools(c.history[n-1])) {
		return "", errors.New("the last message must have role \"user\" (or be an assistant message whose tool calls wait for approval)")
	}
	c.turnStart = n - 1
	for c.turnStart > 0 && c.history[c.turnStart].Role != RoleUser {
		c.turnStart--
	}
	c.preselect(ctx, c.history[c.turnStart].Content)
	answer, err := c.run(ctx)
	if err != nil && !isPending(err) {
		c.history = c.history[:n]
	}
	return answer, err
}

// waitsForTools reports whether m is an assistant message with tool calls
// not yet answered.
func waitsForTools(m Message) bool { return m.Role == RoleAssistant && len(m.ToolCalls) > 0 }

func isPending(err error) bool {
	var pe *PendingError
	return errors.As(err, &pe)
}

func (c *Chat) run(ctx context.Context) (string, error) {
	var lastText string
	c.degraded = ""
	if n := len(c.history); n > 0 && waitsForTools(c.history[n-1]) {
		// Resuming after approval: the calls of the last message first,
		// judged by the session's tools (a tool not listed needs approval,
		// its annotations unknown), so list them before. A listing that
		// fails leaves them unknown, which asks more, never less; the
		// loop below degrades on it.
		c.session.Tools(ctx)
		if err := c.round(ctx, c.history[n-1].ToolCalls); err != nil {
			return "", err
		}
	}
	for round := 1; round <= c.opts.MaxRounds; round++ {
		tools, added, err := c.session.Tools(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("request cancelled: %w", ctx.Err())
			}
			c.degrade(fmt.Sprintf("the hub failed listing tools (%s)", oneLine(err.Error())))
			tools = c.session.lastTools()
		}
		c.stats.ToolsDiscovered += len(added)
		if len(added) > 0 {
			c.opts.Logger.Debug("tools discovered", "tools", added)
		}

		c.turnStart = c.trimHistory(c.turnStart)
		defs := c.offered(toolDefs(tools))
		system, err := c.systemPrompt(defs)
		if err != nil {
			return "", err
		}
		if c.degraded != "" {
			system += degradedNote(c.degraded)
		}
		req := &Request{
			Model:             c.opts.Model,
			System:            system,
			Messages:          formatResults(c.history, c.opts.ToolResultFormat),
			Tools:             defs,
			Temperature:       c.opts.Temperature,
			MaxTokens:         c.opts.MaxTokens,
			ParallelToolCalls: c.opts.ParallelToolCalls,
			NoToolCalls:       c.degraded != "",
		}
		if c.opts.ResponseSchema != nil && c.nativeSchema() {
			req.ResponseSchema = c.opts.ResponseSchema.raw
		}
		var onText func(string)
		if c.opts.Stream && c.opts.Observer.Text != nil {
			onText = c.opts.Observer.Text
		}
		c.stats.ModelCalls++
		resp, err := c.opts.Provider.Complete(ctx, req, onText)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return "", fmt.Errorf("request cancelled: %w", ctxErr)
			}
			return "", err
		}
		c.stats.InputTokens += resp.Usage.InputTokens
		c.stats.OutputTokens += resp.Usage.OutputTokens

		msg := resp.Message
		msg.Role = RoleAssistant
		if c.degraded != "" && len(msg.ToolCalls) > 0 {
			// Asked not to, the model called tools anyway: its text is the
			// answer.
			msg.ToolCalls = nil
			if msg.Content == "" {
				msg.Content = lastText
			}
		}
		c.history = append(c.history, msg)
		if msg.Content != "" {
			lastText = msg.Content
		}
		if len(msg.ToolCalls) == 0 {
			if c.opts.ResponseSchema != nil {
				return c.structured(ctx, req)
			}
			return msg.Content, nil
		}

		if err := c.round(ctx, msg.ToolCalls); err != nil {
			return "", err
		}
	}
	return lastText, &MaxRoundsError{Rounds: c.opts.MaxRounds, Partial: lastText}
}

// round runs the tool calls of the last assistant message (after their
// approval) and appends their results.
func (c *Chat) round(ctx context.Context, calls []ToolCall) error {
	refusals, err := c.approve(ctx, calls)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("request cancelled: %w", err)
	}
	results, hubErrs := c.runTools(ctx, calls, refusals)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("request cancelled: %w", err)
	}
	c.history = append(c.history, Message{Role: RoleTool, ToolResults: results})
	c.session.markStale()
	if reason := c.failure(calls, results, hubErrs); reason != "" {
		c.degrade(reason)
	}
	return nil
}

// systemPrompt resolves the system prompt of one model call: the explicit
// one, else the model's template rendered with the tools of this call.
func (c *Chat) systemPrompt(defs []ToolDef) (string, error) {
	if c.opts.System != "" || c.opts.Template == nil {
		return c.opts.System, nil
	}
	return c.opts.Template.Render(templateData(c.opts.ModelName, defs))
}

// degrade switches the rest of the turn to answering without tools.
func (c *Chat) degrade(reason string) {
	if c.degraded != "" {
		return
	}
	c.degraded = reason
	// Info: the observer already tells the user, in one line.
	c.opts.Logger.Info("answering without tools", "reason", reason)
	if c.opts.Observer.Degraded != nil {
		c.opts.Observer.Degraded(reason)
	}
}

// runTools executes every call of one assistant message and returns the
// results in call order, whatever order they finished in, and for each
// call the error when the hub session itself failed.
func (c *Chat) runTools(ctx context.Context, calls []ToolCall, refusals []string) ([]ToolResult, []error) {
	results := make([]ToolResult, len(calls))
	hubErrs := make([]error, len(calls))
	took := make([]time.Duration, len(calls))
	one := func(i int) {
		call := calls[i]
		if refusals[i] != "" {
			results[i] = refused(call, refusals[i])
			if c.opts.Observer.ToolDone != nil {
				c.opts.Observer.ToolDone(call, results[i], 0)
			}
			return
		}
		if c.opts.Observer.ToolStart != nil {
			c.opts.Observer.ToolStart(call)
		}
		start := time.Now()
		results[i], hubErrs[i] = c.callTool(ctx, call)
		took[i] = time.Since(start)
		if c.opts.Observer.ToolDone != nil {
			c.opts.Observer.ToolDone(call, results[i], took[i])
		}
	}
	if c.opts.ParallelToolCalls && len(calls) > 1 {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { one(i) })
		}
		wg.Wait()
	} else {
		for i := range calls {
			one(i)
		}
	}
	for i, call := range calls {
		if refusals[i] != "" {
			continue
		}
		// call_tool only carries the call: count the tool it ran.
		name := toolOfCall(call)
		c.stats.recordTool(name, c.session.serverOf(name), results[i].IsError)
		c.opts.Logger.Debug("tool call", "tool", call.Name, "error", results[i].IsError, "took", took[i])
	}
	return results, hubErrs
}

// toolOfCall is the tool a call runs: call_tool's target, or the call's
// own name.
func toolOfCall(call ToolCall) string {
	if call.Name == callToolName {
		var a struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(call.Arguments, &a) == nil && a.Name != "" {
			return a.Name
		}
	}
	return call.Name
}

// callTool runs one call. Every failure becomes an error result for the
// model: a bad call is the model's to fix, not a reason to end the chat.
// The error is returned too when the hub session itself failed.
func (c *Chat) callTool(ctx context.Context, call ToolCall) (ToolResult, error) {
	res := ToolResult{CallID: call.ID, Name: call.Name}
	fail := func(format string, a ...any) ToolResult {
		res.IsError = true
		res.Parts = []Part{{Type: PartText, Text: fmt.Sprintf(format, a...)}}
		return res
	}
	args := map[string]any{}
	if len(call.Arguments) > 0 && string(call.Arguments) != "null" {
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return fail("Error: the arguments of %s are not a JSON object (%v); call it again with valid JSON arguments.", call.Name, err), nil
		}
	}
	out, err := c.session.Call(ctx, call.Name, args)
	if err != nil {
		if ctx.Err() != nil {
			return fail("Error: tool call %s was cancelled.", call.Name), nil
		}
		var hubErr error
		if hubFailure(ctx, err) {
			hubErr = err
		}
		return fail("Error: tool %s failed: %v", call.Name, err), hubErr
	}
	res.IsError = out.IsError
	res.Parts = resultParts(out)
	if len(res.Parts) == 0 {
		res.Parts = []Part{{Type: PartText, Text: "(no output)"}}
	}
	return res, nil
}

// SetObserver replaces the observer; the REPL installs its own so the
// answer and tool lines go to its writers.
func (c *Chat) SetObserver(o Observer) { c.opts.Observer = o }

// SetStream turns streaming on or off for the next turns.
func (c *Chat) SetStream(on bool) { c.opts.Stream = on }

package chatloop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
)

const (
	defaultAnthropicBaseURL = "https://api.anthropic.com"
	// defaultMaxTokens is sent to Anthropic, whose API requires max_tokens.
	defaultMaxTokens = 4096
	anthropicVersion = "2023-06-01"
	// anthropicTimeout bounds a non-streamed messages call (all attempts),
	// as Anthropic's own client does; streams run as long as they send.
	anthropicTimeout = 10 * time.Minute
)

// anthropicProvider speaks the Anthropic messages API.
type anthropicProvider struct {
	name    string
	baseURL string
	api     *endpoint
}

func newAnthropic(name string, p config.Provider) *anthropicProvider {
	base := p.BaseURL
	if base == "" {
		base = defaultAnthropicBaseURL
	}
	header := http.Header{}
	header.Set("X-Api-Key", p.APIKey)
	header.Set("Anthropic-Version", anthropicVersion)
	return &anthropicProvider{name: name, baseURL: base, api: newEndpoint(apiURL(base, "v1/messages"), p.APIKey, header)}
}

func (p *anthropicProvider) Name() string { return p.name }

// anthropicImageTypes are the image types the messages API accepts; other
// images are summarised.
func anthropicImageType(mime string) bool {
	switch mime {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

// The request body of POST /v1/messages, as much of it as the chat uses.
type antRequest struct {
	Model       string         `json:"model"`
	MaxTokens   int            `json:"max_tokens"`
	System      []antText      `json:"system,omitempty"`
	Messages    []antMessage   `json:"messages"`
	Tools       []antTool      `json:"tools,omitempty"`
	ToolChoice  *antToolChoice `json:"tool_choice,omitempty"`
	Temperature *float64       `json:"temperature,omitempty"`
	Stream      bool           `json:"stream,omitempty"`
}

// antMessage holds content blocks: antText, antToolUse, antToolResult.
type antMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type antText struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

func textBlock(s string) antText { return antText{Type: "text", Text: s} }

type antToolUse struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// antToolResult holds antText and antImage blocks.
type antToolResult struct {
	Type      string `json:"type"` // "tool_result"
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error,omitempty"`
	Content   []any  `json:"content,omitempty"`
}

type antImage struct {
	Type   string `json:"type"` // "image"
	Source struct {
		Data      string `json:"data"`
		MediaType string `json:"media_type"`
		Type      string `json:"type"` // "base64"
	} `json:"source"`
}

type antTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

type antToolChoice struct {
	Type                   string `json:"type"` // "auto", "none", "tool"
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

func (p *anthropicProvider) params(req *Request) (*antRequest, error) {
	params := &antRequest{Model: req.Model, MaxTokens: req.MaxTokens}
	if params.MaxTokens <= 0 {
		// Required by the API; the model's own limit applies below it.
		params.MaxTokens = defaultMaxTokens
	}
	if req.System != "" {
		params.System = []antText{textBlock(req.System)}
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, antMessage{Role: "user", Content: []any{textBlock(m.Content)}})
		case RoleAssistant:
			var blocks []any
			if m.Content != "" {
				blocks = append(blocks, textBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				args := c.Arguments
				if len(args) == 0 || !json.Valid(args) || args[0] != '{' {
					// The API wants an object; the model's bad arguments were
					// already answered with an error result.
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, antToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: args})
			}
			if len(blocks) == 0 {
				// Empty content is rejected; an empty answer still has to
				// keep its turn.
				blocks = append(blocks, textBlock("(no answer)"))
			}
			params.Messages = append(params.Messages, antMessage{Role: "assistant", Content: blocks})
		case RoleTool:
			var blocks []any
			for _, r := range m.ToolResults {
				tr := antToolResult{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
				for _, part := range r.Parts {
					if part.Type == PartImage && anthropicImageType(part.MIMEType) {
						img := antImage{Type: "image"}
						img.Source.Type = "base64"
						img.Source.MediaType = part.MIMEType
						img.Source.Data = base64.StdEncoding.EncodeToString(part.Data)
						tr.Content = append(tr.Content, img)
						continue
					}
					if text := part.summary(); text != "" {
						tr.Content = append(tr.Content, textBlock(text))
					}
				}
				blocks = append(blocks, tr)
			}
			params.Messages = append(params.Messages, antMessage{Role: "user", Content: blocks})
		default:
			return nil, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		params.Tools = append(params.Tools, antTool{Name: t.Name, Description: t.Description, InputSchema: inputSchema(schema)})
	}
	switch {
	case req.ForceTool != "":
		params.ToolChoice = &antToolChoice{Type: "tool", Name: req.ForceTool}
	case len(req.Tools) > 0 && req.NoToolCalls:
		params.ToolChoice = &antToolChoice{Type: "none"}
	case len(req.Tools) > 0 && !req.ParallelToolCalls:
		params.ToolChoice = &antToolChoice{Type: "auto", DisableParallelToolUse: true}
	}
	params.Temperature = req.Temperature
	return params, nil
}

// inputSchema is a tool's JSON schema as the messages API takes it: type
// is always "object", required keeps only its strings, every other keyword
// passes through.
func inputSchema(schema map[string]any) map[string]any {
	in := map[string]any{}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			if v != nil {
				in[k] = v
			}
		case "required":
			var req []string
			if list, ok := v.([]any); ok {
				for _, r := range list {
					if s, ok := r.(string); ok {
						req = append(req, s)
					}
				}
			}
			if len(req) > 0 {
				in[k] = req
			}
		default:
			in[k] = v
		}
	}
	in["type"] = "object"
	return in
}

// antResponse is a message: the whole answer of a non-streamed call, or
// the start of a streamed one.
type antResponse struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Content    []antBlock `json:"content"`
	StopReason string     `json:"stop_reason"`
	Usage      antUsage   `json:"usage"`
}

type antBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type antUsage struct {
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// antEvent is one event of a streamed message.
type antEvent struct {
	Type         string      `json:"type"`
	Message      antResponse `json:"message"`
	Index        int         `json:"index"`
	ContentBlock antBlock    `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage antUsage `json:"usage"`
}

func (p *anthropicProvider) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	params.Stream = onText != nil
	body, err := marshalRequest(params)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	var msg *antResponse
	if onText == nil {
		ctx, cancel := context.WithTimeout(ctx, anthropicTimeout)
		defer cancel()
		res, err := p.api.post(ctx, body, false)
		if err != nil {
			return nil, p.fail(req.Model, err)
		}
		msg = &antResponse{}
		if err := decodeJSON(res, msg); err != nil {
			return nil, p.fail(req.Model, err)
		}
	} else {
		res, err := p.api.post(ctx, body, true)
		if err != nil {
			return nil, p.fail(req.Model, err)
		}
		defer res.Body.Close()
		if msg, err = p.accumulate(req.Model, newSSEReader(res.Body, maxEventBytes), onText); err != nil {
			return nil, err
		}
		if msg.ID == "" && len(msg.Content) == 0 {
			return nil, malformed(p.name, req.Model, p.baseURL, "empty stream")
		}
	}
	if msg.Type != "" && msg.Type != "message" {
		return nil, malformed(p.name, req.Model, p.baseURL, "type "+msg.Type)
	}
	resp := &Response{
		Message:    Message{Role: RoleAssistant},
		StopReason: msg.StopReason,
		Usage:      Usage{OutputTokens: msg.Usage.OutputTokens},
	}
	if msg.Usage.InputTokens != nil {
		resp.Usage.InputTokens = *msg.Usage.InputTokens
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if b.Name == "" {
				return nil, malformed(p.name, req.Model, p.baseURL, "tool_use without a name")
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: rawArgs(string(b.Input))})
		}
	}
	resp.Message.Content = text.String()
	if msg.ID == "" && len(msg.Content) == 0 && msg.StopReason == "" {
		return nil, malformed(p.name, req.Model, p.baseURL, "no message")
	}
	return resp, nil
}

// accumulate builds the message from a stream, passing text deltas to
// onText. Tool input is kept as the raw text the model sent, even when it
// is not valid JSON, so the loop can tell the model its arguments were bad.
func (p *anthropicProvider) accumulate(model string, events *sseReader, onText func(string)) (*antResponse, error) {
	msg := &antResponse{}
	// Per content block: its text so far (a builder, so a long answer is
	// not copied at every delta) and whether input_json_delta replaced the
	// input of content_block_start.
	var texts []*strings.Builder
	var inputStarted []bool
	addBlocks := func(n int) {
		for range n {
			texts = append(texts, &strings.Builder{})
			inputStarted = append(inputStarted, false)
		}
	}
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.fail(model, err)
		}
		if ev.name == "error" {
			return nil, p.fail(model, parseFailure(ev.data, p.api.key))
		}
		var e antEvent
		if err := json.Unmarshal(ev.data, &e); err != nil {
			return nil, p.fail(model, fmt.Errorf("decode stream event: %w", err))
		}
		switch e.Type {
		case "error":
			return nil, p.fail(model, parseFailure(ev.data, p.api.key))
		case "message_start":
			*msg = e.Message
			texts, inputStarted = nil, nil
			addBlocks(len(msg.Content))
		case "content_block_start":
			if e.Index != len(msg.Content) {
				return nil, malformed(p.name, model, p.baseURL, fmt.Sprintf("content block %d started, expected %d", e.Index, len(msg.Content)))
			}
			msg.Content = append(msg.Content, e.ContentBlock)
			addBlocks(1)
		case "content_block_delta":
			if e.Index < 0 || e.Index >= len(msg.Content) {
				return nil, malformed(p.name, model, p.baseURL, fmt.Sprintf("delta for content block %d of %d", e.Index, len(msg.Content)))
			}
			switch e.Delta.Type {
			case "text_delta":
				texts[e.Index].WriteString(e.Delta.Text)
				if e.Delta.Text != "" {
					onText(e.Delta.Text)
				}
			case "input_json_delta":
				b := &msg.Content[e.Index]
				if !inputStarted[e.Index] {
					b.Input, inputStarted[e.Index] = nil, true
				}
				b.Input = append(b.Input, e.Delta.PartialJSON...)
			}
		case "message_delta":
			msg.StopReason = e.Delta.StopReason
			msg.Usage.OutputTokens = e.Usage.OutputTokens
			if e.Usage.InputTokens != nil {
				msg.Usage.InputTokens = e.Usage.InputTokens
			}
		}
	}
	for i := range msg.Content {
		msg.Content[i].Text += texts[i].String()
	}
	return msg, nil
}

func (p *anthropicProvider) fail(model string, err error) error {
	return classify(p.name, model, p.baseURL, errorsAsFailure(err), err)
}

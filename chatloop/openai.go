package chatloop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
)

// openAIProvider speaks OpenAI chat completions: OpenAI itself, OpenRouter,
// Ollama's /v1, vLLM, LM Studio.
type openAIProvider struct {
	name    string
	baseURL string
	api     *endpoint
	// images: tool images go to the model in a user message (chat
	// completions tool messages are text only). Off for Ollama, where most
	// models are text-only and an image makes the request fail.
	images bool
	// completionTokens: api.openai.com wants max_completion_tokens; the
	// compatible servers know max_tokens.
	completionTokens bool
}

func newOpenAI(name string, p config.Provider, images bool) *openAIProvider {
	base := p.BaseURL
	if base == "" {
		base = config.DefaultOpenAIBaseURL
	}
	// Only the configured key is sent, never one from the environment, and
	// none at all for a keyless local server.
	header := http.Header{}
	if p.APIKey != "" {
		header.Set("Authorization", "Bearer "+p.APIKey)
	}
	host := ""
	if u, err := url.Parse(base); err == nil {
		host = u.Hostname()
	}
	return &openAIProvider{
		name: name, baseURL: base, images: images,
		api:              newEndpoint(apiURL(base, "chat/completions"), p.APIKey, header),
		completionTokens: host == "api.openai.com",
	}
}

func (p *openAIProvider) Name() string { return p.name }

// The request body of POST /chat/completions, as much of it as the chat
// uses.
type oaiRequest struct {
	Model               string        `json:"model"`
	Messages            []oaiMessage  `json:"messages"`
	Tools               []oaiTool     `json:"tools,omitempty"`
	ParallelToolCalls   *bool         `json:"parallel_tool_calls,omitempty"`
	ToolChoice          any           `json:"tool_choice,omitempty"`
	Temperature         *float64      `json:"temperature,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	ResponseFormat      any           `json:"response_format,omitempty"`
	Stream              bool          `json:"stream,omitempty"`
	StreamOptions       *oaiStreamOpt `json:"stream_options,omitempty"`
}

type oaiStreamOpt struct {
	IncludeUsage bool `json:"include_usage"`
}

// oaiMessage is one message; Content is a string, or a list of parts for a
// user message with images.
type oaiMessage struct {
	Role       string        `json:"role"`
	Content    any           `json:"content,omitempty"`
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type oaiPart struct {
	Type     string       `json:"type"`
	Text     string       `json:"text,omitempty"`
	ImageURL *oaiImageURL `json:"image_url,omitempty"`
}

type oaiImageURL struct {
	URL string `json:"url"`
}

type oaiToolCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaiTool struct {
	Type     string         `json:"type"`
	Function oaiFunctionDef `json:"function"`
}

type oaiFunctionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

func (p *openAIProvider) params(req *Request) (*oaiRequest, error) {
	params := &oaiRequest{Model: req.Model}
	if req.System != "" {
		params.Messages = append(params.Messages, oaiMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, oaiMessage{Role: "user", Content: m.Content})
		case RoleAssistant:
			a := oaiMessage{Role: "assistant"}
			if m.Content != "" {
				a.Content = m.Content
			}
			for _, c := range m.ToolCalls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, oaiToolCall{ID: c.ID, Type: "function", Function: oaiFunction{Name: c.Name, Arguments: args}})
			}
			params.Messages = append(params.Messages, a)
		case RoleTool:
			var images []oaiPart
			for _, r := range m.ToolResults {
				text := resultText(r.Parts, p.images)
				if r.IsError && !strings.HasPrefix(text, "Error") {
					// Chat completions has no error flag on tool messages.
					text = "Error: " + text
				}
				if p.images && hasImages(r.Parts) {
					text += "\n(images follow in the next message)"
				}
				params.Messages = append(params.Messages, oaiMessage{Role: "tool", Content: text, ToolCallID: r.CallID})
				if !p.images {
					continue
				}
				for _, part := range r.Parts {
					if part.Type != PartImage {
						continue
					}
					if len(images) == 0 {
						images = append(images, oaiPart{Type: "text", Text: "Images returned by the tool calls above:"})
					}
					images = append(images, oaiPart{Type: "image_url", ImageURL: &oaiImageURL{
						URL: "data:" + part.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(part.Data),
					}})
				}
			}
			if len(images) > 0 {
				params.Messages = append(params.Messages, oaiMessage{Role: "user", Content: images})
			}
		default:
			return nil, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		params.Tools = append(params.Tools, oaiTool{Type: "function", Function: oaiFunctionDef{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	switch {
	case len(req.Tools) > 0 && req.NoToolCalls:
		params.ToolChoice = "none"
	case req.ForceTool != "":
		params.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": req.ForceTool}}
	}
	if len(req.ResponseSchema) > 0 {
		params.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "final_answer", "schema": req.ResponseSchema, "strict": false}}
	}
	if len(req.Tools) > 0 && !req.ParallelToolCalls && !req.NoToolCalls {
		// Only sent to turn it off: several compatible servers reject the
		// field, and true is everyone's default.
		f := false
		params.ParallelToolCalls = &f
	}
	params.Temperature = req.Temperature
	if req.MaxTokens > 0 {
		if p.completionTokens {
			params.MaxCompletionTokens = req.MaxTokens
		} else {
			params.MaxTokens = req.MaxTokens
		}
	}
	return params, nil
}

func hasImages(parts []Part) bool {
	for _, p := range parts {
		if p.Type == PartImage {
			return true
		}
	}
	return false
}

// oaiResponse is the answer of POST /chat/completions.
type oaiResponse struct {
	Choices []struct {
		Message struct {
			Content   flexText    `json:"content"`
			ToolCalls []oaiCallIn `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaiUsage `json:"usage"`
}

// oaiChunk is one event of a streamed answer.
type oaiChunk struct {
	Choices []struct {
		Delta struct {
			Content   flexText    `json:"content"`
			ToolCalls []oaiCallIn `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaiUsage       `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type oaiUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// oaiCallIn is a tool call as the model sends it; streamed pieces carry
// the index of the call they belong to.
type oaiCallIn struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string   `json:"name"`
		Arguments flexArgs `json:"arguments"`
	} `json:"function"`
}

// flexText is message text: a string, null, or (from some compatible
// servers) a list of {type: text, text} parts.
type flexText string

func (t *flexText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = flexText(s)
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(b, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		*t = flexText(sb.String())
	}
	return nil
}

// flexArgs is a tool call's arguments: a JSON string per the spec, or the
// object itself from servers that send it unquoted.
type flexArgs string

func (a *flexArgs) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = flexArgs(s)
	} else if string(b) != "null" {
		*a = flexArgs(b)
	}
	return nil
}

func (p *openAIProvider) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	if onText != nil {
		return p.stream(ctx, req, params, onText)
	}
	body, err := marshalRequest(params)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	res, err := p.api.post(ctx, body, false)
	if err != nil {
		return nil, p.fail(req.Model, err)
	}
	var out oaiResponse
	if err := decodeJSON(res, &out); err != nil {
		return nil, p.fail(req.Model, err)
	}
	if len(out.Choices) == 0 {
		return nil, malformed(p.name, req.Model, p.baseURL, "no choices")
	}
	choice := out.Choices[0]
	resp := &Response{
		Message:    Message{Role: RoleAssistant, Content: string(choice.Message.Content)},
		StopReason: choice.FinishReason,
	}
	if out.Usage != nil {
		resp.Usage = Usage{InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens}
	}
	for i, c := range choice.Message.ToolCalls {
		if c.Function.Name == "" {
			return nil, malformed(p.name, req.Model, p.baseURL, "tool call without a function name")
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{
			ID: callID(c.ID, i), Name: c.Function.Name, Arguments: rawArgs(string(c.Function.Arguments)),
		})
	}
	return resp, nil
}

func (p *openAIProvider) stream(ctx context.Context, req *Request, params *oaiRequest, onText func(string)) (*Response, error) {
	params.Stream = true
	params.StreamOptions = &oaiStreamOpt{IncludeUsage: true}
	body, err := marshalRequest(params)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	res, err := p.api.post(ctx, body, true)
	if err != nil {
		return nil, p.fail(req.Model, err)
	}
	defer res.Body.Close()

	resp := &Response{Message: Message{Role: RoleAssistant}}
	var text strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	chunks := 0
	events := newSSEReader(res.Body, maxEventBytes)
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.fail(req.Model, err)
		}
		if bytes.HasPrefix(ev.data, []byte("[DONE]")) {
			break
		}
		var chunk oaiChunk
		if err := json.Unmarshal(ev.data, &chunk); err != nil {
			return nil, p.fail(req.Model, fmt.Errorf("decode stream event: %w", err))
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return nil, p.fail(req.Model, parseFailure(ev.data, p.api.key))
		}
		chunks++
		if chunk.Usage != nil {
			resp.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		ch := chunk.Choices[0]
		if ch.FinishReason != "" {
			resp.StopReason = ch.FinishReason
		}
		if d := string(ch.Delta.Content); d != "" {
			text.WriteString(d)
			onText(d)
		}
		// Tool calls arrive in pieces keyed by index: the first piece has
		// the id and name, the rest append to the arguments.
		for _, tc := range ch.Delta.ToolCalls {
			i := tc.Index
			if i < 0 || i > 128 {
				return nil, malformed(p.name, req.Model, p.baseURL, fmt.Sprintf("tool call index %d", i))
			}
			for len(calls) <= i {
				calls = append(calls, &partial{})
			}
			c := calls[i]
			if tc.ID != "" {
				c.id = tc.ID
			}
			if tc.Function.Name != "" {
				c.name += tc.Function.Name
			}
			c.args.WriteString(string(tc.Function.Arguments))
		}
	}
	if chunks == 0 {
		return nil, malformed(p.name, req.Model, p.baseURL, "empty stream")
	}
	resp.Message.Content = text.String()
	for i, c := range calls {
		if c.name == "" {
			return nil, malformed(p.name, req.Model, p.baseURL, "tool call without a function name")
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: callID(c.id, i), Name: c.name, Arguments: rawArgs(c.args.String())})
	}
	return resp, nil
}

func (p *openAIProvider) fail(model string, err error) error {
	return classify(p.name, model, p.baseURL, errorsAsFailure(err), err)
}

// callID keeps a provider's id, or makes one for servers that send none
// (the id must round-trip to pair results with calls).
func callID(id string, i int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("call_%d", i)
}

// rawArgs keeps the model's argument text as JSON when it is JSON; the loop
// reports invalid arguments back to the model as an error result.
func rawArgs(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	// Not JSON: keep it as a JSON string so the history still marshals; the
	// loop sees a non-object and reports it.
	b, _ := json.Marshal(s)
	return b
}

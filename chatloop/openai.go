package chatloop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openAIProvider speaks OpenAI chat completions: OpenAI itself, OpenRouter,
// Ollama's /v1, vLLM, LM Studio.
type openAIProvider struct {
	name    string
	baseURL string
	client  openai.Client
	// images: tool images go to the model in a user message (chat
	// completions tool messages are text only). Off for Ollama, where most
	// models are text-only and an image makes the request fail.
	images bool
	// completionTokens: api.openai.com wants max_completion_tokens; the
	// compatible servers know max_tokens.
	completionTokens bool
}

func newOpenAI(name string, p ProviderConfig, images bool) *openAIProvider {
	base := p.BaseURL
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	// The key is always set explicitly, even empty, so OPENAI_API_KEY from
	// the environment never leaks to a provider configured without one.
	opts := []option.RequestOption{option.WithBaseURL(base), option.WithAPIKey(p.APIKey)}
	host := ""
	if u, err := url.Parse(base); err == nil {
		host = u.Hostname()
	}
	return &openAIProvider{
		name: name, baseURL: base, client: openai.NewClient(opts...), images: images,
		completionTokens: host == "api.openai.com",
	}
}

func (p *openAIProvider) Name() string { return p.name }

func (p *openAIProvider) params(req *Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			var images []openai.ChatCompletionContentPartUnionParam
			for _, r := range m.ToolResults {
				text := resultText(r.Parts, p.images)
				if r.IsError && !strings.HasPrefix(text, "Error") {
					// Chat completions has no error flag on tool messages.
					text = "Error: " + text
				}
				if p.images && hasImages(r.Parts) {
					text += "\n(images follow in the next message)"
				}
				params.Messages = append(params.Messages, openai.ToolMessage(text, r.CallID))
				if !p.images {
					continue
				}
				for _, part := range r.Parts {
					if part.Type != PartImage {
						continue
					}
					if len(images) == 0 {
						images = append(images, openai.TextContentPart("Images returned by the tool calls above:"))
					}
					images = append(images, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
						URL: "data:" + part.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(part.Data),
					}))
				}
			}
			if len(images) > 0 {
				params.Messages = append(params.Messages, openai.UserMessage(images))
			}
		default:
			return params, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if len(req.Tools) > 0 && !req.ParallelToolCalls {
		// Only sent to turn it off: several compatible servers reject the
		// field, and true is everyone's default.
		params.ParallelToolCalls = openai.Bool(false)
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.completionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
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

func (p *openAIProvider) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	if onText != nil {
		return p.stream(ctx, req, params, onText)
	}
	out, err := p.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, p.fail(req.Model, err)
	}
	if len(out.Choices) == 0 {
		return nil, malformed(p.name, req.Model, p.baseURL, "no choices")
	}
	choice := out.Choices[0]
	resp := &Response{
		Message:    Message{Role: RoleAssistant, Content: choice.Message.Content},
		StopReason: choice.FinishReason,
		Usage:      Usage{InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens},
	}
	for i, c := range choice.Message.ToolCalls {
		if c.Function.Name == "" {
			return nil, malformed(p.name, req.Model, p.baseURL, "tool call without a function name")
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{
			ID: callID(c.ID, i), Name: c.Function.Name, Arguments: rawArgs(c.Function.Arguments),
		})
	}
	return resp, nil
}

func (p *openAIProvider) stream(ctx context.Context, req *Request, params openai.ChatCompletionNewParams, onText func(string)) (*Response, error) {
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	s := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()

	resp := &Response{Message: Message{Role: RoleAssistant}}
	var text strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	chunks := 0
	for s.Next() {
		chunk := s.Current()
		chunks++
		if chunk.JSON.Usage.Valid() {
			resp.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		ch := chunk.Choices[0]
		if ch.FinishReason != "" {
			resp.StopReason = ch.FinishReason
		}
		if d := ch.Delta.Content; d != "" {
			text.WriteString(d)
			onText(d)
		}
		// Tool calls arrive in pieces keyed by index: the first piece has
		// the id and name, the rest append to the arguments.
		for _, tc := range ch.Delta.ToolCalls {
			i := int(tc.Index)
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
			c.args.WriteString(tc.Function.Arguments)
		}
	}
	if err := s.Err(); err != nil {
		return nil, p.fail(req.Model, err)
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
	var apierr *openai.Error
	if errors.As(err, &apierr) {
		return classify(p.name, model, p.baseURL, &apiFailure{
			status: apierr.StatusCode, code: apierr.Code, kind: apierr.Type, message: apierr.Message,
		}, err)
	}
	return classify(p.name, model, p.baseURL, nil, err)
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

package chatloop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

const defaultAnthropicBaseURL = "https://api.anthropic.com"

// anthropicProvider speaks the Anthropic messages API.
type anthropicProvider struct {
	name    string
	baseURL string
	client  anthropic.Client
}

func newAnthropic(name string, p ProviderConfig) *anthropicProvider {
	base := p.BaseURL
	if base == "" {
		base = defaultAnthropicBaseURL
	}
	return &anthropicProvider{
		name: name, baseURL: base,
		client: anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey(p.APIKey)),
	}
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

func (p *anthropicProvider) params(req *Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: req.Model, MaxTokens: int64(req.MaxTokens)}
	if params.MaxTokens <= 0 {
		// Required by the API; the model's own limit applies below it.
		params.MaxTokens = defaultMaxTokens
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				args := c.Arguments
				if len(args) == 0 || !json.Valid(args) || args[0] != '{' {
					// The API wants an object; the model's bad arguments were
					// already answered with an error result.
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, args, c.Name))
			}
			if len(blocks) == 0 {
				// Empty content is rejected; an empty answer still has to
				// keep its turn.
				blocks = append(blocks, anthropic.NewTextBlock("(no answer)"))
			}
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		case RoleTool:
			var blocks []anthropic.ContentBlockParamUnion
			for _, r := range m.ToolResults {
				tr := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
				if r.IsError {
					tr.IsError = anthropic.Bool(true)
				}
				for _, part := range r.Parts {
					if part.Type == PartImage && anthropicImageType(part.MIMEType) {
						tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
							Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
								Data: base64.StdEncoding.EncodeToString(part.Data), MediaType: anthropic.Base64ImageSourceMediaType(part.MIMEType),
							}},
						}})
						continue
					}
					if text := part.summary(); text != "" {
						tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: text}})
					}
				}
				blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &tr})
			}
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		default:
			return params, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		extra := map[string]any{}
		for k, v := range schema {
			if k != "type" && k != "properties" && k != "required" {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			in.ExtraFields = extra
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if len(req.Tools) > 0 && !req.ParallelToolCalls {
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: anthropic.Bool(true)}}
	}
	if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	return params, nil
}

func (p *anthropicProvider) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("provider %s, model %s: build request: %w", p.name, req.Model, err)
	}
	var msg *anthropic.Message
	if onText == nil {
		msg, err = p.client.Messages.New(ctx, params)
		if err != nil {
			return nil, p.fail(req.Model, err)
		}
	} else {
		msg = &anthropic.Message{}
		// The SDK's accumulator replaces tool input that is not valid JSON
		// with {}, which would run the tool with no arguments; keep the
		// raw text so the loop can tell the model its arguments were bad.
		inputs := map[int64]*strings.Builder{}
		s := p.client.Messages.NewStreaming(ctx, params)
		defer s.Close()
		for s.Next() {
			ev := s.Current()
			if err := msg.Accumulate(ev); err != nil {
				return nil, malformed(p.name, req.Model, p.baseURL, oneLine(err.Error()))
			}
			if ev.Type == "content_block_delta" {
				switch ev.Delta.Type {
				case "text_delta":
					if ev.Delta.Text != "" {
						onText(ev.Delta.Text)
					}
				case "input_json_delta":
					if inputs[ev.Index] == nil {
						inputs[ev.Index] = &strings.Builder{}
					}
					inputs[ev.Index].WriteString(ev.Delta.PartialJSON)
				}
			}
		}
		for i, b := range inputs {
			if int(i) < len(msg.Content) && msg.Content[i].Type == "tool_use" {
				msg.Content[i].Input = json.RawMessage(b.String())
			}
		}
		if err := s.Err(); err != nil {
			return nil, p.fail(req.Model, err)
		}
		if msg.ID == "" && len(msg.Content) == 0 {
			return nil, malformed(p.name, req.Model, p.baseURL, "empty stream")
		}
	}
	if msg.Type != "" && msg.Type != "message" {
		return nil, malformed(p.name, req.Model, p.baseURL, "type "+string(msg.Type))
	}
	resp := &Response{
		Message:    Message{Role: RoleAssistant},
		StopReason: string(msg.StopReason),
		Usage:      Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens},
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

func (p *anthropicProvider) fail(model string, err error) error {
	var apierr *anthropic.Error
	if errors.As(err, &apierr) {
		var env struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apierr.RawJSON()), &env)
		return classify(p.name, model, p.baseURL, &apiFailure{
			status: apierr.StatusCode, kind: env.Error.Type, message: env.Error.Message,
		}, err)
	}
	return classify(p.name, model, p.baseURL, nil, err)
}

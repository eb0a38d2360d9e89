package chatloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Structured answers. With a response schema (chat --schema, the HTTP
// API's response_schema) the final answer of a turn is a JSON object
// valid against it:
//
//   - OpenAI-type providers get the schema as response_format
//     (json_schema) on every model call, so the answer is the JSON itself;
//   - Anthropic answers as usual, then a last call forces the formatter
//     tool final_answer, whose input schema is the response schema; its
//     input is the answer.
//
// An answer that is not valid gets one repair round (the validation error
// goes back to the model), then the turn fails with a SchemaError.

// formatterTool is the tool the Anthropic formatter call forces.
const formatterTool = "final_answer"

// maxSchemaBytes bounds a response schema.
const maxSchemaBytes = 1 << 20

// ResponseSchema is a parsed and resolved response schema.
type ResponseSchema struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

// ParseResponseSchema checks a JSON schema for final answers: valid JSON
// Schema, describing an object.
func ParseResponseSchema(data []byte) (*ResponseSchema, error) {
	if len(data) > maxSchemaBytes {
		return nil, fmt.Errorf("the schema is larger than %d bytes", maxSchemaBytes)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("not a JSON schema: %w", err)
	}
	if s.Type != "object" {
		return nil, errors.New(`the schema must describe a JSON object ("type": "object")`)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	raw, err := json.Marshal(json.RawMessage(data))
	if err != nil {
		return nil, fmt.Errorf("not a JSON schema: %w", err)
	}
	return &ResponseSchema{raw: raw, resolved: rs}, nil
}

// validate checks one answer.
func (s *ResponseSchema) validate(answer string) error {
	var v any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		return fmt.Errorf("the answer is not JSON (%v)", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("the answer is not a JSON object")
	}
	return s.resolved.Validate(v)
}

// SchemaError is a final answer still invalid after the repair round.
type SchemaError struct {
	Answer string
	Err    error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the final answer does not match the response schema after one repair round: %v", e.Err)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// nativeSchema is implemented by providers whose API takes a response
// schema (OpenAI's response_format).
type nativeSchema interface{ nativeSchema() bool }

func (p *openAIProvider) nativeSchema() bool { return true }

func (c *Chat) nativeSchema() bool {
	n, ok := c.opts.Provider.(nativeSchema)
	return ok && n.nativeSchema()
}

// complete is one model call outside the loop's rounds, counted in stats.
func (c *Chat) complete(ctx context.Context, req *Request) (*Response, error) {
	c.stats.ModelCalls++
	resp, err := c.opts.Provider.Complete(ctx, req, nil)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("request cancelled: %w", ctxErr)
		}
		return nil, err
	}
	c.stats.InputTokens += resp.Usage.InputTokens
	c.stats.OutputTokens += resp.Usage.OutputTokens
	return resp, nil
}

// structured turns the loop's final answer (the last history message) into
// one valid against the response schema. base is the last round's request.
func (c *Chat) structured(ctx context.Context, base *Request) (string, error) {
	schema := c.opts.ResponseSchema
	last := &c.history[len(c.history)-1]
	if c.nativeSchema() {
		verr := schema.validate(last.Content)
		if verr == nil {
			return last.Content, nil
		}
		req := *base
		req.NoToolCalls = true
		req.Messages = append(slices.Clone(req.Messages), *last, Message{Role: RoleUser,
			Content: fmt.Sprintf("Your answer is not valid against the required JSON schema: %v. Reply again with only the corrected JSON object.", verr)})
		resp, err := c.complete(ctx, &req)
		if err != nil {
			return "", err
		}
		if err := schema.validate(resp.Message.Content); err != nil {
			return "", &SchemaError{Answer: resp.Message.Content, Err: err}
		}
		last.Content = resp.Message.Content
		return last.Content, nil
	}

	// The formatter call: the conversation so far, an instruction, and
	// final_answer forced.
	req := *base
	req.NoToolCalls = false
	req.ForceTool = formatterTool
	req.Tools = append(slices.Clone(req.Tools), ToolDef{Name: formatterTool,
		Description: "Give the final answer to the user as structured data.", InputSchema: schema.raw})
	req.Messages = append(slices.Clone(req.Messages), *last, Message{Role: RoleUser,
		Content: "Now give your final answer by calling " + formatterTool + "."})
	var verr error
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := c.complete(ctx, &req)
		if err != nil {
			return "", err
		}
		var args json.RawMessage
		for _, tc := range resp.Message.ToolCalls {
			if tc.Name == formatterTool {
				args = tc.Arguments
				break
			}
		}
		if args == nil {
			verr = fmt.Errorf("the model did not call %s", formatterTool)
			if attempt == 0 {
				req.Messages = append(req.Messages, resp.Message, Message{Role: RoleUser, Content: "Call " + formatterTool + " with your final answer."})
			}
			continue
		}
		if verr = schema.validate(string(args)); verr == nil {
			last.Content = string(args)
			return last.Content, nil
		}
		call := ToolCall{ID: resp.Message.ToolCalls[0].ID, Name: formatterTool, Arguments: args}
		for _, tc := range resp.Message.ToolCalls {
			if tc.Name == formatterTool {
				call = tc
			}
		}
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{call}},
			Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: call.ID, Name: formatterTool, IsError: true,
				Parts: []Part{{Type: PartText, Text: fmt.Sprintf("Error: not valid against the schema: %v. Call %s again with a corrected answer.", verr, formatterTool)}}}}})
	}
	return "", &SchemaError{Err: verr}
}

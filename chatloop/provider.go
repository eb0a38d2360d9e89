package chatloop

import (
	"context"
	"encoding/json"
)

// Provider is one LLM endpoint behind its wire format. Implementations are
// stateless apart from their HTTP client, so one Provider serves any number
// of concurrent chats.
type Provider interface {
	// Name is the provider's name in hub.yaml, used in error messages.
	Name() string
	// Complete sends one request. When onText is non-nil the provider
	// streams and calls it with each piece of answer text as it arrives;
	// the returned Response still carries the whole message.
	Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error)
}

// Request is everything one model call needs, in provider-neutral form.
type Request struct {
	Model       string
	System      string
	Messages    []Message
	Tools       []ToolDef
	Temperature *float64
	MaxTokens   int
	// ParallelToolCalls tells providers that support it whether the model
	// may ask for several tools in one answer.
	ParallelToolCalls bool
	// NoToolCalls asks for an answer without tool calls (tool_choice
	// none); the tools are still sent, as a history with tool calls needs
	// their definitions.
	NoToolCalls bool
	// ResponseSchema asks for an answer that is a JSON object valid against
	// it, where the API supports it (OpenAI's response_format).
	ResponseSchema json.RawMessage
	// ForceTool makes the model call this tool.
	ForceTool string
}

// ToolDef is a tool offered to the model, taken verbatim from tools/list.
type ToolDef struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Response is the model's answer to one Request.
type Response struct {
	// Message is the assistant message: text and/or tool calls.
	Message    Message
	Usage      Usage
	StopReason string
}

// Usage is the token count of one model call as the provider reported it.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Roles of the provider-neutral history.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool holds the results of every tool call of one assistant
	// message, in call order. Providers split it as their format wants
	// (one "tool" message per result for OpenAI, one user message with
	// tool_result blocks for Anthropic).
	RoleTool = "tool"
)

// Message is one entry of the chat history.
type Message struct {
	Role        string       `json:"role"`
	Content     string       `json:"content,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// ToolCall is the model asking to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolResult is what a tool call returned, ready to go back to the model.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	IsError bool   `json:"is_error,omitempty"`
	Parts   []Part `json:"parts"`
}

// Part kinds.
const (
	PartText  = "text"
	PartImage = "image"
	// PartResource is anything the model cannot see directly: audio, a
	// binary embedded resource or a resource link. It is always summarised.
	PartResource = "resource"
)

// Part is one piece of tool output.
type Part struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
	// Data is the raw bytes of an image (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	URI  string `json:"uri,omitempty"`
}

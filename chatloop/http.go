package chatloop

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
)

// maxChatBody bounds a POST /v1/chat body; a conversation with images can
// be large, but not unbounded.
const maxChatBody = 16 << 20

// ChatRequest is the body of POST /v1/chat. Messages is the conversation
// so far in the shape this API returns (a plain {role, content} list works);
// the last one must be from the user. A leading {role: "system"} message
// overrides the system prompt.
type ChatRequest struct {
	Model    string    `json:"model"`
	Toolset  string    `json:"toolset"`
	Messages []Message `json:"messages"`
	// ResponseSchema, a JSON schema of an object, makes the answer a JSON
	// object valid against it.
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
	// Approvals answer the pending approvals of the previous response, by
	// their id (not the provider's call id): "yes" or "no". The messages
	// must be that response's, unchanged. Each id answers its call once.
	Approvals map[string]string `json:"approvals,omitempty"`
}

// ChatResponse is the answer: the whole conversation including the new
// assistant and tool messages, the final answer text, and the stats.
type ChatResponse struct {
	Messages []Message `json:"messages"`
	Answer   string    `json:"answer"`
	Stats    Stats     `json:"stats"`
	// Degraded says why the turn was answered without tools (the hub or
	// an upstream failed during it); absent when it was not.
	Degraded string `json:"degraded,omitempty"`
	// PendingApprovals are tool calls waiting for the client's approval
	// (status 202): send messages back with approvals to go on.
	PendingApprovals []PendingApproval `json:"pending_approvals,omitempty"`
}

type errorResponse struct {
	Error string `json:"error"`
	Stats *Stats `json:"stats,omitempty"`
}

// Handler serves POST /v1/chat. Each request opens its own hub session
// (so its loaded tools never leak to another request), runs
// the loop to a final answer and closes the session. Authentication is the
// caller's: mount it behind the same auth as /mcp. Tools that need
// approval wait for the client's answer (chat.approve defaults to
// on_miss here); the ids of the pending approvals live in this Handler.
func Handler(cfg *Config, hub Hub, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	approvals := newApprovalStore()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, errorResponse{Error: "use POST with a JSON body {model, messages, toolset}"})
			return
		}
		var req ChatRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxChatBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: "invalid JSON body: " + err.Error() + `; expected {"model": "...", "messages": [{"role": "user", "content": "..."}], "toolset": ""}`})
			return
		}
		system := ""
		if len(req.Messages) > 0 && req.Messages[0].Role == "system" {
			system, req.Messages = req.Messages[0].Content, req.Messages[1:]
		}
		if err := validateHistory(req.Messages); err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
			return
		}
		if _, _, _, err := cfg.ResolveModel(req.Model); err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
			return
		}
		var schema *ResponseSchema
		if len(req.ResponseSchema) > 0 && string(req.ResponseSchema) != "null" {
			var err error
			if schema, err = ParseResponseSchema(req.ResponseSchema); err != nil {
				writeJSON(w, http.StatusBadRequest, errorResponse{Error: "response_schema: " + err.Error()})
				return
			}
		}

		ctx := r.Context()
		session, err := Dial(ctx, hub, req.Toolset, logger)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
			return
		}
		defer session.Close()
		decide := &apiApprovals{store: approvals, principal: hub.PrincipalOf(ctx), system: system, toolset: req.Toolset, answers: req.Approvals}
		chat, err := cfg.NewChat(session, ChatOptions{Model: req.Model, System: system, Logger: logger, ResponseSchema: schema,
			DefaultApprove: config.ApproveOnMiss, Approver: decide.approver})
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
			return
		}
		chat.SetHistory(req.Messages)
		start := time.Now()
		answer, err := chat.Continue(ctx)
		stats := chat.Stats()
		logger.Info("chat api", "model", chat.opts.ModelName, "toolset", req.Toolset, "model_calls", stats.ModelCalls, "tool_calls", stats.ToolCalls, "took", time.Since(start), "error", err)
		var pending *PendingError
		if errors.As(err, &pending) {
			decide.issue(chat.History(), pending.Calls)
			writeJSON(w, http.StatusAccepted, ChatResponse{Messages: chat.History(), Stats: stats, PendingApprovals: pending.Calls})
			return
		}
		if err != nil {
			status := http.StatusInternalServerError
			var pe *ProviderError
			var mr *MaxRoundsError
			var se *SchemaError
			switch {
			case errors.As(err, &pe):
				status = http.StatusBadGateway
			case errors.As(err, &mr), errors.As(err, &se):
				status = http.StatusUnprocessableEntity
			case ctx.Err() != nil:
				return // the client went away
			}
			writeJSON(w, status, errorResponse{Error: err.Error(), Stats: &stats})
			return
		}
		writeJSON(w, http.StatusOK, ChatResponse{Messages: chat.History(), Answer: answer, Stats: stats, Degraded: chat.Degraded()})
	})
}

// validateHistory checks what a client sent before any model is paid for.
func validateHistory(msgs []Message) error {
	if len(msgs) == 0 {
		return errors.New(`messages is empty; send at least [{"role": "user", "content": "..."}]`)
	}
	for i, m := range msgs {
		switch m.Role {
		case RoleUser, RoleAssistant:
		case RoleTool:
			if len(m.ToolResults) == 0 {
				return fmt.Errorf("messages[%d]: a tool message needs tool_results", i)
			}
		default:
			return fmt.Errorf("messages[%d]: unknown role %q; use user, assistant or tool (system only first)", i, m.Role)
		}
	}
	if last := msgs[len(msgs)-1]; last.Role != RoleUser && !waitsForTools(last) {
		return errors.New(`the last message must have role "user" (or be the assistant message whose tool calls wait for approvals)`)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

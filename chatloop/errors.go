package chatloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
)

// ProviderError is a failed model call, reduced to one line that names the
// provider, the model, what went wrong and what to do about it. The
// underlying error stays available through Unwrap.
type ProviderError struct {
	Provider string
	Model    string
	// Status is the HTTP status, 0 when no response came back.
	Status int
	// Problem says what went wrong, Fix what to do.
	Problem string
	Fix     string
	Err     error
}

func (e *ProviderError) Error() string {
	msg := fmt.Sprintf("provider %s, model %s: %s", e.Provider, e.Model, e.Problem)
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func (e *ProviderError) Unwrap() error { return e.Err }

// classify turns a failed call into a ProviderError. api is nil when the
// request got no HTTP error response (network failure, bad body).
func classify(provider, model, baseURL string, api *apiFailure, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	pe := &ProviderError{Provider: provider, Model: model, Err: err}
	if api == nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		var netErr net.Error
		var opErr *net.OpError
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &syntax), errors.As(err, &typ), isDecodeError(err):
			pe.Problem = "the endpoint returned a response that is not valid for this API (" + oneLine(err.Error()) + ")"
			pe.Fix = fmt.Sprintf("check that providers.%s.base_url (%s) points at the API root (for OpenAI-compatible servers usually ending in /v1)", provider, baseURL)
		case errors.As(err, &dnsErr), errors.As(err, &opErr), errors.As(err, &netErr):
			pe.Problem = fmt.Sprintf("cannot reach %s (%s)", baseURL, rootCause(err))
			pe.Fix = fmt.Sprintf("is the server running (ollama: `ollama serve`)? check providers.%s.base_url", provider)
		default:
			pe.Problem = oneLine(err.Error())
		}
		return pe
	}
	pe.Status = api.status
	detail := ""
	if api.message != "" {
		detail = ": " + oneLine(api.message)
	}
	lower := strings.ToLower(api.code + " " + api.kind + " " + api.message)
	switch {
	case api.status == 0:
		// An error event inside a stream that had started fine.
		what := api.message
		if api.kind != "" {
			what = api.kind + ": " + what
		}
		pe.Problem = "the provider reported an error while streaming (" + oneLine(what) + ")"
		pe.Fix = "try again; if it persists, check the provider's status"
	case api.status == 401 || api.status == 403:
		pe.Problem = fmt.Sprintf("the API key was rejected (HTTP %d%s)", api.status, detail)
		pe.Fix = fmt.Sprintf("check providers.%s.api_key and the environment variable it reads", provider)
	case api.status == 429:
		pe.Problem = "rate limited or out of quota (HTTP 429, still failing after retries" + detail + ")"
		pe.Fix = "wait and try again, or check the account's quota and billing"
	case isContextLength(lower):
		pe.Problem = "the conversation is longer than the model's context window" + detail
		pe.Fix = "start a new chat (/reset in the REPL), ask for less tool output, or use a model with a larger context"
	case api.status == 404 || strings.Contains(lower, "model_not_found") || strings.Contains(lower, "not_found_error") ||
		(strings.Contains(lower, "model") && (strings.Contains(lower, "not found") || strings.Contains(lower, "does not exist"))):
		pe.Problem = fmt.Sprintf("the provider does not know this model (HTTP %d%s)", api.status, detail)
		pe.Fix = fmt.Sprintf("check the model id in hub.yaml models (ollama: `ollama pull %s`; list what the endpoint serves with its /models)", model)
	case api.status >= 500:
		pe.Problem = fmt.Sprintf("server error (HTTP %d, still failing after retries%s)", api.status, detail)
		pe.Fix = "the provider is having trouble; try again later"
	default:
		pe.Problem = fmt.Sprintf("request rejected (HTTP %d%s)", api.status, detail)
		pe.Fix = "check the model's settings in hub.yaml (temperature, max_tokens) and that the model supports tool calling"
	}
	return pe
}

func isContextLength(s string) bool {
	for _, k := range []string{"context_length_exceeded", "context length", "context window", "maximum context", "prompt is too long", "too many tokens", "maximum number of tokens"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// isDecodeError recognises JSON decoding failures reported without a typed
// error.
func isDecodeError(err error) bool {
	s := err.Error()
	for _, k := range []string{"invalid character", "unexpected end of JSON", "cannot unmarshal", "unexpected EOF", "looking for beginning of value", "content-type"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return oneLine(err.Error())
		}
		err = u
	}
}

// oneLine keeps messages to one short line: provider error bodies can be
// whole HTML pages.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// errMalformed is a response that parsed but makes no sense (no choices,
// tool call without a name).
type errMalformed struct{ what string }

func (e errMalformed) Error() string { return "malformed response: " + e.what }

func malformed(provider, model, baseURL, what string) error {
	return &ProviderError{Provider: provider, Model: model,
		Problem: "the endpoint returned a malformed response (" + what + ")",
		Fix:     fmt.Sprintf("check that providers.%s.base_url (%s) points at a compatible API", provider, baseURL),
		Err:     errMalformed{what}}
}

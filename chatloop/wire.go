package chatloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/origin"
)

// The provider clients are plain net/http: each API is two endpoints, and
// the rules below are all the behaviour the vendor SDKs added on top.
const (
	// maxResponseBytes bounds everything read from one model call: a JSON
	// answer, or a whole stream. Far above any real answer (a streamed
	// 100k-token answer is a few tens of MiB with its JSON framing).
	maxResponseBytes = 64 << 20
	// maxEventBytes bounds one SSE event, held whole while it is decoded.
	// Real events are one delta; a server sending a whole tool call or
	// answer in one event stays far below it.
	maxEventBytes = 4 << 20
	// maxErrorBytes bounds an error body: only its message is used.
	maxErrorBytes = 64 << 10

	// maxRetries: a failed call is retried twice (as the vendor SDKs did)
	// when it failed to connect or got 408, 409, 429 or 5xx, unless the
	// server says x-should-retry: false.
	maxRetries = 2
	// Between attempts the client waits what Retry-After-Ms or Retry-After
	// ask, else 0.5s, 1s (minus up to a quarter of jitter). A server asking
	// for more than maxRetryAfter gets its error reported at once: a chat
	// should not hang for minutes.
	firstBackoff  = 500 * time.Millisecond
	maxRetryAfter = time.Minute

	// responseHeaderTimeout bounds the wait for a response's headers (a
	// server that accepts and never answers); streams, whose bodies run
	// long, are not cut by it.
	responseHeaderTimeout = 10 * time.Minute
)

// providerTransport is shared by every provider client so connections are
// reused across chats; it is built once and never changed.
var providerTransport = sync.OnceValue(func() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return t
})

// endpoint is one provider URL with its headers.
type endpoint struct {
	url    string
	header http.Header
	// key is the API key, only to scrub it from error messages.
	key    string
	client *http.Client
}

// apiURL joins a base_url and an API path the way the vendor SDKs did: the
// base gets a trailing slash and the path is resolved against it, so
// http://host/v1 and http://host/v1/ both give http://host/v1/<path>.
func apiURL(base, path string) string {
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	b, err := url.Parse(base)
	if err != nil {
		return base + path // config validation already refused it
	}
	return b.ResolveReference(&url.URL{Path: path}).String()
}

func newEndpoint(u, key string, header http.Header) *endpoint {
	header.Set("Content-Type", "application/json")
	header.Set("User-Agent", "mcp-hub")
	// The key goes to the configured origin only: a redirect elsewhere is
	// refused (net/http would carry X-Api-Key and the body along).
	client := &http.Client{Transport: providerTransport(), CheckRedirect: origin.CheckRedirect}
	return &endpoint{url: u, header: header, key: key, client: client}
}

// post sends body and returns a 2xx response, whose body is capped at
// maxResponseBytes. A final non-2xx answer is an *apiFailure.
func (e *endpoint) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header = e.header.Clone()
		if stream {
			req.Header.Set("Accept", "text/event-stream")
		} else {
			req.Header.Set("Accept", "application/json")
		}
		res, err := e.client.Do(req)
		if err == nil && res.StatusCode >= 200 && res.StatusCode < 300 {
			res.Body = &cappedBody{rc: res.Body, left: maxResponseBytes}
			return res, nil
		}
		if ctx.Err() != nil {
			if res != nil {
				res.Body.Close()
			}
			return nil, ctx.Err()
		}
		if err == nil {
			err = readFailure(res, e.key)
		}
		var redirect *origin.RedirectError
		if errors.As(err, &redirect) {
			return nil, err // another attempt would be refused alike
		}
		if attempt >= maxRetries || !retryable(res) {
			return nil, err
		}
		delay, ok := retryDelay(res, attempt)
		if !ok {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// retryable: no response at all (the connection failed), or a status
// that says "try again".
func retryable(res *http.Response) bool {
	if res == nil {
		return true
	}
	switch res.Header.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// retryDelay is the wait before retry number attempt+1, and false when the
// server asks for longer than maxRetryAfter.
func retryDelay(res *http.Response, attempt int) (time.Duration, bool) {
	if res != nil {
		if d, ok := retryAfter(res.Header); ok {
			return d, d <= maxRetryAfter
		}
	}
	d := firstBackoff << attempt
	return d - rand.N(d/4), true
}

// retryAfter reads Retry-After-Ms (milliseconds, sent by OpenAI and
// Anthropic) or Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			if ms > float64(maxRetryAfter/time.Millisecond) {
				return maxRetryAfter + 1, true
			}
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		if s > maxRetryAfter.Seconds() {
			return maxRetryAfter + 1, true
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// apiFailure is a provider's HTTP error response (or an error it sent in a
// stream), in common terms.
type apiFailure struct {
	status  int    // 0 for an error inside a stream
	code    string // e.g. context_length_exceeded, model_not_found
	kind    string // e.g. not_found_error, invalid_request_error
	message string // the provider's own message, API key scrubbed
}

func (f *apiFailure) Error() string {
	msg := f.message
	if f.kind != "" {
		msg = f.kind + ": " + msg
	}
	if f.status == 0 {
		return "error in the response stream: " + msg
	}
	return fmt.Sprintf("HTTP %d: %s", f.status, msg)
}

// readFailure reads (a bounded part of) an error response and closes it.
func readFailure(res *http.Response, key string) *apiFailure {
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBytes))
	f := parseFailure(body, key)
	f.status = res.StatusCode
	return f
}

// parseFailure reads the error shapes providers send: OpenAI and Anthropic
// {"error": {"message", "type", "code"}}, Ollama {"error": "text"}, vLLM
// {"message", "type", "code"}. Anything else gives an empty message (an
// HTML error page says nothing the status does not). The API key is
// scrubbed in case a proxy echoes the request.
func parseFailure(body []byte, key string) *apiFailure {
	type detail struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var env struct {
		Error json.RawMessage `json:"error"`
		detail
	}
	f := &apiFailure{}
	if json.Unmarshal(body, &env) != nil {
		return f
	}
	d := env.detail
	var s string
	if json.Unmarshal(env.Error, &s) == nil {
		d = detail{Message: s}
	} else {
		var inner detail
		if json.Unmarshal(env.Error, &inner) == nil && (inner.Message != "" || inner.Type != "") {
			d = inner
		}
	}
	f.message, f.kind = d.Message, d.Type
	if json.Unmarshal(d.Code, &s) == nil {
		f.code = s
	} else if len(d.Code) > 0 && string(d.Code) != "null" {
		f.code = string(d.Code)
	}
	if key != "" {
		f.message = strings.ReplaceAll(f.message, key, "[redacted]")
	}
	return f
}

// cappedBody fails a read past its limit instead of growing without end.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLarge{"the response", maxResponseBytes}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }

// marshalRequest encodes a request body without HTML escaping (<, > and &
// in tool output stay readable in provider logs).
func marshalRequest(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeJSON reads a whole (capped) JSON response into v.
func decodeJSON(res *http.Response, v any) error {
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// errorsAsFailure finds an *apiFailure in err.
func errorsAsFailure(err error) *apiFailure {
	var f *apiFailure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

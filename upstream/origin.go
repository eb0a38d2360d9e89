package upstream

import (
	"fmt"
	"net/http"

	"github.com/mcp-hub/mcp-hub/internal/origin"
)

// Credentials are scoped to an origin: the scheme, host and port of the
// URL they were configured with. A remote server that redirects to another
// host, announces an SSE endpoint on another host, or sends the hub from
// https to plain http, would otherwise receive the same headers (an API
// key, a bearer token) as the server they were meant for.
//
// The rule is simple, and strict: an HTTP upstream talks to its configured
// origin only. A request anywhere else (a redirect, an SSE endpoint) is
// refused before it is sent, with an error that names both origins, and
// the server shows that error. Redirects within the origin are followed.

// An origin is a URL's scheme, host and port (package origin): the one
// rule the chat's and embeddings' clients keep too.

// OriginError is a request the hub refused to send to an origin other than
// the configured one.
type OriginError struct {
	Configured, Requested origin.Origin
	// Redirect is true when the server redirected there.
	Redirect bool
}

func (e *OriginError) Error() string {
	how := "a request to"
	if e.Redirect {
		how = "a redirect to"
	}
	msg := fmt.Sprintf("refused %s %s: this server is configured at %s, and the hub sends its requests (and credentials) only there",
		how, e.Requested, e.Configured)
	if e.Requested.Scheme == "http" && e.Configured.Scheme == "https" {
		msg += " (and never from https down to http)"
	}
	return msg + "; put the server's final URL in 'url'"
}

// ScopedTransport is an http.RoundTripper for one remote server. It sends
// requests to Origin only, refusing any other with an *OriginError, and
// adds Headers to each. OAuth and other credentials can sit on it: whatever
// a wrapping RoundTripper (or the SDK) adds to a request reaches Origin or
// nothing.
type ScopedTransport struct {
	Origin  origin.Origin
	Headers map[string]string
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
}

func (t *ScopedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if got := origin.Of(req.URL); got != t.Origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &OriginError{Configured: t.Origin, Requested: got}
	}
	if len(t.Headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.Headers {
			req.Header.Set(k, v)
		}
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}

// NewScopedClient returns an http.Client whose requests go to origin only
// (through rt, usually a *ScopedTransport or something wrapping one), and
// that refuses a redirect to any other origin with an *OriginError naming
// both. Redirects within the origin are followed, at most 10.
func NewScopedClient(configured origin.Origin, rt http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if got := origin.Of(req.URL); got != configured {
				return &OriginError{Configured: configured, Requested: got, Redirect: true}
			}
			if len(via) >= origin.MaxRedirects {
				return fmt.Errorf("stopped after %d redirects within %s", origin.MaxRedirects, configured)
			}
			return nil
		},
	}
}

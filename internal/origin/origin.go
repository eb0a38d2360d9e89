// Package origin keeps a client's credentials on the origin they were
// configured for. The HTTP clients that send an API key (the embeddings
// client, the chat's provider clients) follow a redirect only within the
// origin of the request that was redirected; a redirect anywhere else is
// refused before anything is sent there, so no header (an X-Api-Key that
// net/http would copy along, a bearer token) and no body leaves the
// origin.
package origin

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// MaxRedirects bounds the redirects followed within one origin.
const MaxRedirects = 10

// Origin is a URL's scheme, host and port, with the default port written
// out: https://example.com and https://example.com:443 are one origin,
// and so 127.0.0.1:8080 and 127.0.0.1:8081 are two.
type Origin struct {
	Scheme string // lower case
	Host   string // host:port, lower case
}

// Of returns u's origin.
func Of(u *url.URL) Origin {
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return Origin{Scheme: scheme, Host: net.JoinHostPort(host, port)}
}

func (o Origin) String() string { return o.Scheme + "://" + o.Host }

// RedirectError is a redirect to another origin, refused.
type RedirectError struct {
	Configured, Requested Origin
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("refused a redirect to another origin (%s): requests and their credentials go only to the configured %s; put the final URL in base_url",
		e.Requested, e.Configured)
}

// CheckRedirect is an http.Client's CheckRedirect: it follows a redirect
// only within the origin of the first request (via[0]), at most
// MaxRedirects, and refuses any other with a *RedirectError.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	first := Of(via[0].URL)
	if got := Of(req.URL); got != first {
		return &RedirectError{Configured: first, Requested: got}
	}
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects within %s", MaxRedirects, first)
	}
	return nil
}

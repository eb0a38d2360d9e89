package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/auth"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
)

// authenticator is the auth configuration in force. It is built whole from
// the config's auth: section and swapped whole (SetAuth), so a request sees
// one consistent version and a config reload applies to the next request.
type authenticator struct {
	tokens   []staticToken
	oauth    *jwtVerifier    // nil without auth.oauth
	limits   *rateLimiter    // nil without auth.rate_limit
	failures *failureLimiter // nil when auth is not required
	required bool            // auth.tokens or auth.oauth is configured
	// bind attaches a verified principal to the request the way go-sdk
	// reads it (see admit).
	bind func(http.Handler) http.Handler
}

func newAuthenticator(a config.Auth, key *keyedHash, log *slog.Logger) *authenticator {
	n := &authenticator{
		tokens:   staticTokens(a.Tokens, key),
		limits:   newRateLimiter(a.RateLimit),
		required: len(a.Tokens) > 0 || a.OAuth != nil,
	}
	if n.required {
		n.failures = newFailureLimiter()
	}
	if a.OAuth != nil {
		n.oauth = newJWTVerifier(*a.OAuth, log)
	}
	n.bind = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p := hub.PrincipalFrom(ctx)
		if p == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Scopes: p.Scopes}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return n
}

func (a *authenticator) close() {
	if a != nil && a.oauth != nil {
		a.oauth.close()
	}
}

// authn is the auth configuration in force.
func (g *Gateway) authn() *authenticator { return g.auth.Load() }

// setAuth puts a new auth configuration in force for the requests that
// follow (Apply, on a reload). Sessions already open keep the principal
// that opened them, and rate-limit buckets start afresh.
func (g *Gateway) setAuth(a config.Auth) error {
	if a.OAuth != nil {
		if err := a.OAuth.Validate(); err != nil {
			return err
		}
	}
	g.auth.Swap(newAuthenticator(a, g.hashKey.Load(), g.log)).close()
	return nil
}

// principal finds who sent r: anonymous when no auth is configured, else
// the holder of a static token or of a valid access token. Every token is
// checked here (requests, /healthz, the dashboard's login form), so a
// token that fails counts against its address's maxAuthFailures, and past
// them no token from there is checked at all (a missing token is counted by
// admit, where it is a 401).
func (a *authenticator) principal(r *http.Request) (*hub.Principal, error) {
	if !a.required {
		return anonymous, nil
	}
	if wait, blocked := a.failures.blocked(r); blocked {
		return nil, &tooManyFailuresError{wait: wait}
	}
	tok, _ := credential(r)
	if tok == "" {
		return nil, errNoToken
	}
	p, err := a.verify(r, tok)
	if err != nil && !errors.Is(err, errIssuerUnavailable) {
		a.failures.failed(r)
	}
	return p, err
}

// tooManyFailuresError is a token not checked because its address is past
// maxAuthFailures.
type tooManyFailuresError struct{ wait time.Duration }

func (e *tooManyFailuresError) Error() string {
	return fmt.Sprintf("more than %d failed authentications a minute from this address; retry in %ds", maxAuthFailures, retryAfterSeconds(e.wait))
}

// tooManyFailures answers a request from an address past maxAuthFailures:
// 429 with Retry-After.
func (g *Gateway) tooManyFailures(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
	g.refuse(w, r, "auth_failures", http.StatusTooManyRequests, "", "Too Many Requests: "+(&tooManyFailuresError{wait: wait}).Error())
}

// verify finds the principal of a token.
func (a *authenticator) verify(r *http.Request, tok string) (*hub.Principal, error) {
	if p := matchToken(a.tokens, tok); p != nil {
		return p, nil
	}
	if a.oauth != nil && strings.Count(tok, ".") == 2 {
		return a.oauth.verify(r.Context(), tok, audiencesFor(r, a.oauth.cfg.Audience))
	}
	return nil, fmt.Errorf("%w: not one of auth.tokens", auth.ErrInvalidToken)
}

// admit lets a guarded request through to next, with its principal in the
// context, or answers it: 401 (no or bad credentials; under UIPath the
// request goes on without a principal, for the login form, unless its
// address is past the failed-authentication limit), 403 (missing
// scope, or a toolset the principal may not use), 429 (rate limit, or too
// many failed authentications from the address), 400 (a batch over
// MaxBatchMessages), 413, 503 (the issuer's keys cannot be fetched).
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, next http.Handler) {
	a := g.authn()
	p, err := a.principal(r)
	if err != nil {
		// Past the failed-authentication limit every path gets the same
		// 429, the dashboard's login form included: it is where tokens
		// are guessed by hand.
		_, blocked := errors.AsType[*tooManyFailuresError](err)
		if _, fromHeader := credential(r); isUIPath(r.URL.Path) && !fromHeader && !blocked {
			next.ServeHTTP(w, r)
			return
		}
		if errors.Is(err, errNoToken) {
			a.failures.failed(r) // a bad token was counted by principal
		}
		g.unauthorized(w, r, a, err)
		return
	}
	if challenge, msg, denied := g.forbidden(a, p, r); denied {
		g.refuse(w, r, "forbidden", http.StatusForbidden, challenge, msg)
		return
	}
	n, ok := g.batchSize(w, r)
	if !ok {
		return
	}
	if wait, ok := a.limits.allow(p, r, n); !ok {
		g.rateLimited(w, r, p, n, wait)
		return
	}
	if p == anonymous {
		// Without auth nothing needs the principal in the request: an
		// HTTP session without one is anonymous (newHTTPSession), and
		// skipping the request copy keeps the hot path as it was.
		next.ServeHTTP(w, r)
		return
	}
	r = r.WithContext(hub.WithPrincipal(r.Context(), p))
	if _, fromHeader := credential(r); p.ID == "" || !fromHeader {
		next.ServeHTTP(w, r)
		return
	}
	// go-sdk binds an HTTP session to the user that opened it and refuses
	// the session's later requests from anyone else (403), reading the user
	// from auth.TokenInfo in the request context. Only its RequireBearerToken
	// can put that there, so the verified principal goes through it.
	a.bind(next).ServeHTTP(w, r)
}

// rateLimited answers a request (a batch of n) over auth.rate_limit: 429,
// with Retry-After unless the batch is more than the bucket holds at once.
// Each request of a batch counts as refused.
func (g *Gateway) rateLimited(w http.ResponseWriter, r *http.Request, p *hub.Principal, n int, wait time.Duration) {
	msg := fmt.Sprintf("Too Many Requests: %s is over auth.rate_limit; retry in %ds", p.Name, retryAfterSeconds(wait))
	switch {
	case wait < 0:
		msg = fmt.Sprintf("Too Many Requests: %d requests (the messages of a batch, or the URIs of a subscriptions/listen) are more than auth.rate_limit lets %s send at once (its burst); send fewer at once", n, p.Name)
	case n > 1:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		msg = fmt.Sprintf("Too Many Requests: %d requests (the messages of a batch, or the URIs of a subscriptions/listen, each count) are over auth.rate_limit for %s; retry in %ds", n, p.Name, retryAfterSeconds(wait))
	default:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
	}
	g.metrics.refused.WithLabelValues("rate_limited").Add(float64(n - 1))
	g.refuse(w, r, "rate_limited", http.StatusTooManyRequests, "", msg)
}

// forbidden is the authorization decision for a verified principal p: a
// token without auth.oauth.required_scopes, or restricted to no toolset
// that r may use (r's toolset, or the default one for paths without),
// is denied, with the challenge and message of its 403. admit applies it
// to every guarded path; serveHealth shows its details only to those it
// lets through.
func (g *Gateway) forbidden(a *authenticator, p *hub.Principal, r *http.Request) (challenge, msg string, denied bool) {
	if a.oauth != nil && p.Kind == hub.PrincipalOAuth {
		if missing := a.oauth.missingScopes(p); len(missing) > 0 {
			return fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(a.oauth.cfg.RequiredScopes, " "), resourceMetadataURL(r)),
				"Forbidden: the access token lacks the scope " + strings.Join(missing, ", ") + " (auth.oauth.required_scopes)", true
		}
	}
	if _, err := g.hub.ToolsetFor(p, r.PathValue("toolset")); err != nil {
		return "", "Forbidden: " + err.Error(), true
	}
	return "", "", false
}

// unauthorized answers a request whose credentials did not verify.
func (g *Gateway) unauthorized(w http.ResponseWriter, r *http.Request, a *authenticator, err error) {
	challenge := `Bearer realm="mcp-hub"`
	want := "one of auth.tokens"
	if a.oauth != nil {
		challenge += fmt.Sprintf(`, resource_metadata=%q`, resourceMetadataURL(r))
		if len(a.oauth.cfg.RequiredScopes) > 0 {
			challenge += fmt.Sprintf(`, scope=%q`, strings.Join(a.oauth.cfg.RequiredScopes, " "))
		}
		want = "an access token from " + a.oauth.cfg.Issuer
		if len(a.tokens) > 0 {
			want += ", or one of auth.tokens"
		}
	}
	if tmf, ok := errors.AsType[*tooManyFailuresError](err); ok {
		g.tooManyFailures(w, r, tmf.wait)
		return
	}
	if errors.Is(err, errIssuerUnavailable) {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(a.oauth.retryAfter())))
		g.refuse(w, r, "issuer_unavailable", http.StatusServiceUnavailable, challenge, "Service Unavailable: "+err.Error())
		return
	}
	if !errors.Is(err, errNoToken) {
		challenge += `, error="invalid_token"`
		if te, ok := errors.AsType[*tokenError](err); ok {
			challenge += fmt.Sprintf(`, error_description=%q`, te.description)
		}
	}
	g.refuse(w, r, "unauthorized", http.StatusUnauthorized, challenge,
		fmt.Sprintf("Unauthorized: %v; send Authorization: Bearer <token> (%s)", err, want))
}

// refuse answers a request the guard turns away, counts it and logs it.
func (g *Gateway) refuse(w http.ResponseWriter, r *http.Request, reason string, status int, challenge, msg string) {
	g.metrics.refused.WithLabelValues(reason).Inc()
	g.log.Info("HTTP request refused", "status", status, "path", r.URL.Path, "remote", r.RemoteAddr, "why", msg)
	if challenge != "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	http.Error(w, msg, status)
}

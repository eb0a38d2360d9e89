package gateway

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcp-hub/mcp-hub/hub"
)

// VerifyToken checks a token as if r had carried it in its Authorization
// header (the dashboard's login form) and returns its principal.
func (g *Gateway) VerifyToken(r *http.Request, token string) (*hub.Principal, error) {
	a := g.authn()
	if !a.required {
		return anonymous, nil
	}
	if strings.TrimSpace(token) == "" {
		return nil, errNoToken
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	p, err := a.principal(r2)
	if err != nil {
		return nil, err
	}
	if _, err := g.hub.ToolsetFor(p, ""); err != nil {
		return nil, err
	}
	return p, nil
}

// RefuseTooManyFailures answers r as every guarded path does when err
// (from VerifyToken) is the failed-authentication limit's: 429 with
// Retry-After. It reports whether it answered.
func (g *Gateway) RefuseTooManyFailures(w http.ResponseWriter, r *http.Request, err error) bool {
	tmf, ok := errors.AsType[*tooManyFailuresError](err)
	if ok {
		g.tooManyFailures(w, r, tmf.wait)
	}
	return ok
}

// AuthRequired reports whether HTTP requests need a token.
func (g *Gateway) AuthRequired() bool { return g.authn().required }

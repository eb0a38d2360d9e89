package hub

import (
	"context"
	"slices"
)

// Principal is who made a request: the holder of a static token, the
// subject of an OAuth access token, or anonymous when auth is off. The
// audit log, the dashboard, rate limits and session ownership all go by it.
type Principal struct {
	// ID is unique across kinds and the same on every replica and after a
	// restart: an HTTP session is bound to it (go-sdk compares it as
	// auth.TokenInfo.UserID on every request of the session). "" for
	// anonymous and local principals, whose sessions are not bound.
	// It is namespaced by kind, so that equal names of different kinds
	// are different principals: token:NAME (or token:hmac:HEX for a
	// token without a name), oauth:ISSUER#SUB for an OAuth user,
	// client:ISSUER#CLIENT_ID for an OAuth client acting for itself.
	ID string
	// Name is the short form: the token's name, or the access token's
	// `sub` (its client's id without one). Never a secret, nor unique:
	// anything that tells principals apart goes by ID (Key).
	Name string
	// Kind is PrincipalToken, PrincipalOAuth, PrincipalAnonymous or PrincipalLocal.
	Kind string
	// Restricted is set when auth.oauth.toolset_claim is configured: the
	// principal may use only Toolsets (possibly none).
	Restricted bool
	Toolsets   []string
	Scopes     []string
}

// Principal kinds.
const (
	PrincipalToken     = "token"     // one of auth.tokens
	PrincipalOAuth     = "oauth"     // a JWT access token of auth.oauth.issuer
	PrincipalAnonymous = "anonymous" // HTTP without auth configured
	PrincipalLocal     = "local"     // stdio and in-process sessions (chat, search)
)

var (
	local = &Principal{Name: "local", Kind: PrincipalLocal}
)

// Key is what tells p from every other principal in the audit log and on
// the dashboard: its ID, or for anonymous and local principals (which
// have none) their name.
func (p *Principal) Key() string {
	if p.ID != "" {
		return p.ID
	}
	return p.Name
}

// mayUse reports whether p may open a session of toolset ts ("" = all).
func (p *Principal) mayUse(ts string) bool {
	return !p.Restricted || slices.Contains(p.Toolsets, ts)
}

// defaultToolset is the toolset a session of p gets when the client names none.
func (p *Principal) defaultToolset() string {
	if p.Restricted && len(p.Toolsets) > 0 {
		return p.Toolsets[0]
	}
	return ""
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p. Sessions opened with such a context
// (Connect) belong to p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal a request was admitted as, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

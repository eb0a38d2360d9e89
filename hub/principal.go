package hub

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
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
	anonymous = &Principal{Name: "anonymous", Kind: PrincipalAnonymous}
	local     = &Principal{Name: "local", Kind: PrincipalLocal}
)

// Principal id prefixes (see Principal.ID).
const (
	idToken  = "token:"
	idOAuth  = "oauth:"
	idClient = "client:"
)

// namespacedPrincipal reports whether id has the form of a principal id.
func namespacedPrincipal(id string) bool {
	for _, prefix := range []string{idToken, idOAuth, idClient} {
		if len(id) > len(prefix) && strings.HasPrefix(id, prefix) {
			return true
		}
	}
	return false
}

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

// Token is one static bearer token of auth.tokens: a plain string, or
// {name, token} so that the audit log and the dashboard can say whose it is.
type Token struct {
	Name  string `yaml:"name"`
	Value string `yaml:"token"`
}

// UnmarshalYAML accepts both shapes.
func (t *Token) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		t.Value = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "name" && k != "token" {
				return fmt.Errorf("line %d: auth.tokens: unknown key '%s' (an entry is a token string, or {name: NAME, token: TOKEN})", n.Content[i].Line, k)
			}
		}
		type plain Token
		return n.Decode((*plain)(t))
	}
	return fmt.Errorf("line %d: auth.tokens: an entry is a token string, or {name: NAME, token: TOKEN}", n.Line)
}

// TokenValues are the tokens of auth.tokens, without their names.
func (a Auth) TokenValues() []string {
	out := make([]string, 0, len(a.Tokens))
	for _, t := range a.Tokens {
		out = append(out, t.Value)
	}
	return out
}

// staticToken is a configured token and the principal it stands for.
type staticToken struct {
	value     []byte
	principal *Principal
}

// staticTokens turns auth.tokens into principals. A named token is
// "token:NAME"; an unnamed one is named by its position (token-1, ...) for
// display, and identified by its keyed hash (never a plain one: the id is
// stored in session_store, and a token may be guessable) so that its
// sessions stay its own when the list is reordered. key may be nil only
// when every token has a name (authNeedsHashKey).
func staticTokens(tokens []Token, key *keyedHash) []staticToken {
	out := make([]staticToken, 0, len(tokens))
	for i, t := range tokens {
		if t.Value == "" {
			continue // an unset ${VAR}: it must not let an empty token in
		}
		p := &Principal{Kind: PrincipalToken, Name: t.Name, ID: idToken + t.Name}
		if t.Name == "" {
			if key == nil {
				continue // unreachable: New and Apply resolve the key for such a token
			}
			p.Name = fmt.Sprintf("token-%d", i+1)
			p.ID = idToken + "hmac:" + key.hex([]byte(t.Value))
		}
		out = append(out, staticToken{value: []byte(t.Value), principal: p})
	}
	return out
}

// matchToken compares got in constant time against every token and returns
// the principal of the one it equals.
func matchToken(tokens []staticToken, got string) *Principal {
	var found *Principal
	for _, t := range tokens {
		if subtle.ConstantTimeCompare([]byte(got), t.value) == 1 {
			found = t.principal
		}
	}
	return found
}

// bearerToken returns the token of an `Authorization: Bearer` header.
func bearerToken(header string) (string, bool) {
	const prefix = "Bearer "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(header[len(prefix):])
	return tok, tok != ""
}

// errNoToken is a request without credentials.
var errNoToken = errors.New("no bearer token")

// UICookie is the cookie the dashboard's login form sets. It holds the
// token itself (HttpOnly, SameSite=Strict) and is accepted only under UIPath.
const UICookie = "mcp_hub_token"

// UIPath is where the dashboard lives. A request under it may carry its
// token in UICookie, and one without any token still reaches the handler
// (with no principal), which shows its login form.
const UIPath = "/ui"

func isUIPath(path string) bool { return path == UIPath || strings.HasPrefix(path, UIPath+"/") }

// credential finds the token a request carries: the Authorization header,
// or the dashboard's cookie under UIPath.
func credential(r *http.Request) (token string, fromHeader bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, _ := bearerToken(h)
		return tok, true
	}
	if isUIPath(r.URL.Path) {
		if c, err := r.Cookie(UICookie); err == nil {
			return c.Value, false
		}
	}
	return "", false
}

// clientIP is the remote address without its port: the rate limit key of
// anonymous requests.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sameOrigin reports whether a browser's Origin is the hub's own (the
// dashboard posting its forms). On a loopback listener the Host check has
// already refused a rebinding attacker's name.
func sameOrigin(r *http.Request, origin string) bool {
	return origin == "http://"+r.Host || origin == "https://"+r.Host
}

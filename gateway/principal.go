package gateway

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
)

// staticToken is a configured token and the principal it stands for.
type staticToken struct {
	value     []byte
	principal *hub.Principal
}

// staticTokens turns auth.tokens into principals. A named token is
// "token:NAME"; an unnamed one is named by its position (token-1, ...) for
// display, and identified by its keyed hash (never a plain one: the id is
// stored in session_store, and a token may be guessable) so that its
// sessions stay its own when the list is reordered. key may be nil only
// when every token has a name (authNeedsHashKey).
func staticTokens(tokens []config.Token, key *keyedHash) []staticToken {
	out := make([]staticToken, 0, len(tokens))
	for i, t := range tokens {
		if t.Value == "" {
			continue // an unset ${VAR}: it must not let an empty token in
		}
		p := &hub.Principal{Kind: hub.PrincipalToken, Name: t.Name, ID: config.TokenIDPrefix + t.Name}
		if t.Name == "" {
			if key == nil {
				continue // unreachable: New and Apply resolve the key for such a token
			}
			p.Name = fmt.Sprintf("token-%d", i+1)
			p.ID = config.TokenIDPrefix + "hmac:" + key.hex([]byte(t.Value))
		}
		out = append(out, staticToken{value: []byte(t.Value), principal: p})
	}
	return out
}

// matchToken compares got in constant time against every token and returns
// the principal of the one it equals.
func matchToken(tokens []staticToken, got string) *hub.Principal {
	var found *hub.Principal
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

// anonymous is the principal of HTTP requests when no auth is configured.
var anonymous = &hub.Principal{Name: "anonymous", Kind: hub.PrincipalAnonymous}

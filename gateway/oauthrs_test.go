package gateway

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/oauthex"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

const testAudience = "https://hub.example.test/mcp"

func oauthConfig(iss *fixture.Issuer) *config.Config {
	cfg := gwConfig()
	cfg.Auth.OAuth = &config.OAuth{Issuer: iss.URL, Audience: testAudience}
	return cfg
}

// oauthInit POSTs an initialize with the token and returns the response.
func oauthInit(t testing.TB, url, token string) *http.Response {
	hdr := map[string]string{}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	return fixture.Post(t, url, fixture.RawInitialize, hdr)
}

// TestOAuthResourceServer: JWT access tokens from a real issuer's keys
// (acceptance 2). Only issuer and audience are configured: the JWKS is
// found through the issuer's RFC 8414 metadata.
func TestOAuthResourceServer(t *testing.T) {
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	iss.AddKey("k2", true, true)
	iss.AddKey("stranger", false, false)
	_, url, _ := gwHub(t, oauthConfig(iss), &gwUpstream{})

	hmacWithPublicKey := func() string {
		pub, _ := x509.MarshalPKIXPublicKey(iss.Key("k1").Public())
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": iss.URL, "aud": testAudience, "sub": "mallory", "exp": time.Now().Add(time.Minute).Unix()})
		tok.Header["kid"] = "k1"
		s, _ := tok.SignedString(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
		return s
	}
	algNone := func() string {
		s, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": iss.URL, "aud": testAudience, "sub": "mallory", "exp": time.Now().Add(time.Minute).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
		return s
	}
	cases := []struct {
		name  string
		token string
		want  int
	}{
		{"good RS256", iss.Token("k1", testAudience, nil), 200},
		{"good ES256", iss.Token("k2", testAudience, nil), 200},
		{"audience in a list", iss.Token("k1", "", jwt.MapClaims{"aud": []string{"other", testAudience}}), 200},
		{"expired within leeway", iss.Token("k1", testAudience, jwt.MapClaims{"exp": time.Now().Add(-3 * time.Second).Unix()}), 200},
		{"no sub: named by its client", iss.Token("k1", testAudience, jwt.MapClaims{"sub": nil, "client_id": "agent-7"}), 200},
		{"no token", "", 401},
		{"wrong audience", iss.Token("k1", "https://other.example/mcp", nil), 401},
		{"expired", iss.Token("k1", testAudience, jwt.MapClaims{"exp": time.Now().Add(-time.Minute).Unix()}), 401},
		{"no exp", iss.Token("k1", testAudience, jwt.MapClaims{"exp": nil}), 401},
		{"not yet valid", iss.Token("k1", testAudience, jwt.MapClaims{"nbf": time.Now().Add(5 * time.Minute).Unix()}), 401},
		{"unknown key", iss.Token("stranger", testAudience, nil), 401},
		{"alg none", algNone(), 401},
		{"HMAC with the public key", hmacWithPublicKey(), 401},
		{"wrong issuer", iss.Token("k1", testAudience, jwt.MapClaims{"iss": "https://evil.example"}), 401},
		{"tampered", iss.Token("k1", testAudience, nil) + "x", 401},
		{"not a JWT", "opaque-token", 401},
	}
	for _, c := range cases {
		resp := oauthInit(t, url+"/mcp", c.token)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d (%s), want %d", c.name, resp.StatusCode, strings.TrimSpace(string(body)), c.want)
			continue
		}
		if c.want != 401 {
			continue
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		wantMeta := fmt.Sprintf(`resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, url)
		if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, wantMeta) {
			t.Errorf("%s: WWW-Authenticate = %q, want Bearer with %s", c.name, challenge, wantMeta)
		}
		if invalid := strings.Contains(challenge, `error="invalid_token"`); invalid != (c.token != "") {
			t.Errorf("%s: WWW-Authenticate = %q: error=invalid_token only when a token was sent", c.name, challenge)
		}
	}

	// The metadata the 401 points at names the issuer, and go-sdk's own
	// client-side check accepts it.
	meta, err := oauthex.GetProtectedResourceMetadata(fixture.Context(t), url+"/.well-known/oauth-protected-resource/mcp", url+"/mcp", http.DefaultClient)
	if err != nil {
		t.Fatalf("RFC 9728 metadata: %v", err)
	}
	if !slices.Equal(meta.AuthorizationServers, []string{iss.URL}) {
		t.Errorf("authorization_servers = %v, want [%s]", meta.AuthorizationServers, iss.URL)
	}
	if root, err := oauthex.GetProtectedResourceMetadata(fixture.Context(t), url+"/.well-known/oauth-protected-resource", url, http.DefaultClient); err != nil || root.AuthorizationServers[0] != iss.URL {
		t.Errorf("root RFC 9728 metadata: %v %v", root, err)
	}
	// An MCP client with a good token works end to end.
	cs, err := fixture.HTTPClient(t, url+"/mcp", map[string]string{"Authorization": "Bearer " + iss.Token("k1", testAudience, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := gwTool(t, cs, "gw__ok", nil); err != nil || res.IsError {
		t.Errorf("call with a good token: %v %v", err, res)
	}
}

// TestOAuthDiscovery: the JWKS is found through the metadata forms the MCP
// authorization spec lists, and refreshed (rate-limited) for an unknown kid.
func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, path string
		oidc       bool
	}{
		{"RFC 8414 at the root", "", false},
		{"RFC 8414 with path insertion", "/tenant/a", false},
		{"OpenID Connect, path appended", "/realms/team", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			iss := fixture.NewIssuer(t, c.path, c.oidc)
			iss.AddKey("k1", false, true)
			_, url, _ := gwHub(t, oauthConfig(iss), &gwUpstream{})
			if resp := oauthInit(t, url+"/mcp", iss.Token("k1", testAudience, nil)); resp.StatusCode != 200 {
				t.Fatalf("good token: %d", resp.StatusCode)
			}
			// A rotation: a new key, not in the cached set, is fetched once.
			iss.AddKey("k2", false, true)
			hits := iss.JWKSHits.Load()
			if resp := oauthInit(t, url+"/mcp", iss.Token("k2", testAudience, nil)); resp.StatusCode != 200 {
				t.Fatalf("token of a rotated-in key: %d", resp.StatusCode)
			}
			if got := iss.JWKSHits.Load(); got != hits+1 {
				t.Errorf("JWKS fetched %d times for the new kid, want 1", got-hits)
			}
			// Forged kids right after cannot make the hub hammer the issuer.
			iss.AddKey("k3", false, false)
			hits = iss.JWKSHits.Load()
			for range 5 {
				if resp := oauthInit(t, url+"/mcp", iss.Token("k3", testAudience, nil)); resp.StatusCode != 401 {
					t.Errorf("unknown kid: %d, want 401", resp.StatusCode)
				}
			}
			if got := iss.JWKSHits.Load(); got != hits {
				t.Errorf("JWKS fetched %d more times for unknown kids within the rate limit, want 0", got-hits)
			}
		})
	}
}

// TestOAuthIssuerDown: while the issuer's keys cannot be had, requests with
// a token get 503 and Retry-After, not 401; the hub still starts.
func TestOAuthIssuerDown(t *testing.T) {
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	tok := iss.Token("k1", testAudience, nil)
	iss.Srv.Close()
	_, url, _ := gwHub(t, oauthConfig(iss), &gwUpstream{})
	resp := oauthInit(t, url+"/mcp", tok)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("issuer down: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestOAuthScopes: required_scopes missing from the token is 403 with
// error="insufficient_scope".
func TestOAuthScopes(t *testing.T) {
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	cfg := oauthConfig(iss)
	cfg.Auth.OAuth.RequiredScopes = []string{"mcp:tools"}
	_, url, _ := gwHub(t, cfg, &gwUpstream{})
	for _, c := range []struct {
		name   string
		claims jwt.MapClaims
		want   int
	}{
		{"scope claim", nil, 200},
		{"scp list", jwt.MapClaims{"scope": nil, "scp": []string{"mcp:tools", "x"}}, 200},
		{"missing", jwt.MapClaims{"scope": "other"}, 403},
	} {
		resp := oauthInit(t, url+"/mcp", iss.Token("k1", testAudience, c.claims))
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
		if c.want == 403 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
			t.Errorf("%s: WWW-Authenticate = %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp := oauthInit(t, url+"/mcp", ""); !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="mcp:tools"`) {
		t.Errorf("401 without a token: WWW-Authenticate = %q, want the required scope", resp.Header.Get("WWW-Authenticate"))
	}
}

// TestSessionBoundToPrincipal: a session belongs to whoever opened it;
// another principal's valid token cannot use it (go-sdk's check, fed by
// the hub), for static tokens and JWTs alike.
func TestSessionBoundToPrincipal(t *testing.T) {
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	cfg := oauthConfig(iss)
	cfg.Auth.Tokens = []config.Token{{Name: "ci", Value: "ci-token-1234"}, {Value: "plain-token-5678"}}
	_, url, _ := gwHub(t, cfg, &gwUpstream{})
	alice, bob := iss.Token("k1", testAudience, nil), iss.Token("k1", testAudience, jwt.MapClaims{"sub": "bob"})
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	for _, c := range []struct{ name, owner, other string }{
		{"JWT subjects", alice, bob},
		{"named and plain static tokens", "ci-token-1234", "plain-token-5678"},
		{"static token and JWT", "ci-token-1234", alice},
	} {
		cs, err := fixture.HTTPClient(t, url+"/mcp", map[string]string{"Authorization": "Bearer " + c.owner})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		session := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion}
		for who, tok := range map[string]string{"owner": c.owner, "other": c.other} {
			hdr := map[string]string{"Authorization": "Bearer " + tok}
			for k, v := range session {
				hdr[k] = v
			}
			resp := fixture.Post(t, url+"/mcp", list, hdr)
			want := map[string]int{"owner": 200, "other": 403}[who]
			if resp.StatusCode != want {
				t.Errorf("%s: tools/list by the %s: status %d, want %d", c.name, who, resp.StatusCode, want)
			}
		}
	}
}

// TestOAuthToolsetClaim: a claim picks the toolset; a group sees only its tools.
func TestOAuthToolsetClaim(t *testing.T) {
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	cfg := oauthConfig(iss)
	cfg.Auth.OAuth.ToolsetClaim = "realm_access.groups"
	cfg.Toolsets = map[string]*config.Toolset{
		"ops":     {Servers: map[string]*config.ToolSelection{"gw": {Include: []string{"ok"}}}},
		"weather": {Servers: map[string]*config.ToolSelection{"weather": {All: true}}},
	}
	h, url, _ := gwHub(t, cfg, &gwUpstream{})
	groups := func(g ...string) string {
		return iss.Token("k1", testAudience, jwt.MapClaims{"realm_access": map[string]any{"groups": g}})
	}
	cs, err := fixture.HTTPClient(t, url+"/mcp", map[string]string{"Authorization": "Bearer " + groups("staff", "ops")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"gw__ok"}) {
		t.Errorf("ops group sees %v, want only its toolset's gw__ok", names)
	}
	if _, err := gwTool(t, cs, "gw__fail", nil); err == nil {
		t.Error("a tool outside the group's toolset could be called")
	}
	// In-process sessions of such a principal (the chat API's) are held to
	// its toolsets too.
	restricted := hub.WithPrincipal(fixture.Context(t), &hub.Principal{Name: "alice", Kind: hub.PrincipalOAuth, ID: "oauth:x#alice", Restricted: true, Toolsets: []string{"ops"}})
	if _, err := h.hub.Connect(restricted, "weather", mcp.NewClient(&mcp.Implementation{Name: "t"}, nil)); err == nil {
		t.Error("Connect opened a toolset the principal may not use")
	}
	own, err := h.hub.Connect(restricted, "", mcp.NewClient(&mcp.Implementation{Name: "t"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if res, err := own.ListTools(fixture.Context(t), nil); err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "gw__ok" {
		t.Errorf("in-process session of the ops principal lists %v (%v), want only gw__ok", res, err)
	}
	for _, c := range []struct {
		name, path, token string
		want              int
	}{
		{"its toolset by path", "/mcp/ops", groups("ops"), 200},
		{"a toolset of its second group", "/mcp/weather", groups("ops", "weather"), 200},
		{"another toolset", "/mcp/weather", groups("ops"), 403},
		{"no configured toolset", "/mcp", groups("staff"), 403},
		{"no claim", "/mcp", iss.Token("k1", testAudience, nil), 403},
	} {
		if resp := oauthInit(t, url+c.path, c.token); resp.StatusCode != c.want {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: %s: %d (%s), want %d", c.name, c.path, resp.StatusCode, strings.TrimSpace(string(b)), c.want)
		}
	}
}

// TestRateLimitPerPrincipal: each principal has its own bucket; past it,
// 429 with Retry-After; an override lifts the limit for one principal.
func TestRateLimitPerPrincipal(t *testing.T) {
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Name: "a", Value: "token-a-1234"}, {Name: "b", Value: "token-b-1234"}, {Name: "c", Value: "token-c-1234"}}
	cfg.Auth.RateLimit = &config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.01, Burst: 2}, Principals: map[string]config.Rate{"token:c": {RequestsPerSecond: 0}}}
	_, url, _ := gwHub(t, cfg, &gwUpstream{})
	get := func(tok string) (int, http.Header) {
		status, _, hdr := fixture.Get(t, url+"/metrics", map[string]string{"Authorization": "Bearer " + tok})
		return status, hdr
	}
	for i := range 2 {
		if status, _ := get("token-a-1234"); status != 200 {
			t.Fatalf("a's request %d within the burst: %d", i+1, status)
		}
	}
	status, hdr := get("token-a-1234")
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || hdr.Get("Retry-After") == "0" {
		t.Errorf("a past the burst: %d, Retry-After %q; want 429 with Retry-After", status, hdr.Get("Retry-After"))
	}
	if status, _ := get("token-b-1234"); status != 200 {
		t.Errorf("b is limited by a's requests: %d", status)
	}
	for i := range 10 {
		if status, _ := get("token-c-1234"); status != 200 {
			t.Fatalf("c (no limit) request %d: %d", i+1, status)
		}
	}
}

// TestReloadSwapsAuth: a reloaded auth configuration applies to the next
// request.
func TestReloadSwapsAuth(t *testing.T) {
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Value: "old-token-1234"}}
	h, url, _ := gwHub(t, cfg, &gwUpstream{})
	if resp := oauthInit(t, url+"/mcp", "old-token-1234"); resp.StatusCode != 200 {
		t.Fatalf("old token: %d", resp.StatusCode)
	}
	next := *cfg
	next.Auth.Tokens = []config.Token{{Value: "new-token-1234"}}
	if err := h.Apply(context.Background(), &next); err != nil {
		t.Fatal(err)
	}
	if resp := oauthInit(t, url+"/mcp", "old-token-1234"); resp.StatusCode != 401 {
		t.Errorf("old token after the swap: %d, want 401", resp.StatusCode)
	}
	if resp := oauthInit(t, url+"/mcp", "new-token-1234"); resp.StatusCode != 200 {
		t.Errorf("new token after the swap: %d, want 200", resp.StatusCode)
	}
}

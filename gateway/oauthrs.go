package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/auth"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/oauthex"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
)

// allowedAlgs are the signatures a token may carry: asymmetric only. No
// `none`, and no HMAC: a public key must never serve as an HMAC secret.
var allowedAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

const (
	// leeway absorbs clock skew between the issuer and the hub for exp/nbf/iat.
	leeway = 10 * time.Second
	// keyFetchTimeout bounds one fetch of the issuer's keys, metadata
	// discovery and JWKS together. No request waits longer for keys: one
	// that finds a fetch running waits for that fetch, never a fetch of
	// its own after it.
	keyFetchTimeout = 5 * time.Second
	// fetchBackoffMin and fetchBackoffMax space out fetches after one
	// failed: the next is no sooner than the backoff, which doubles from
	// min to max while they keep failing. Until then requests that need
	// keys the hub does not have fail at once.
	fetchBackoffMin = 5 * time.Second
	fetchBackoffMax = time.Minute
	// keysRefreshEvery is how old cached keys get before a request starts a
	// refresh in the background; requests use the cached keys meanwhile.
	keysRefreshEvery = time.Hour
	// unknownKIDEvery bounds fetches for tokens signed by a key the cached
	// set does not have (a rotation), so forged kids cannot hammer the issuer.
	unknownKIDEvery = 30 * time.Second
	// maxMetadataBytes bounds the issuer's metadata document and key set.
	maxMetadataBytes = 1 << 20
)

// jwtVerifier checks access tokens against the issuer's keys. The keys are
// fetched when a well-formed token first needs them, cached, refreshed in
// the background when an hour old, and fetched again for an unknown `kid`
// (at most once per unknownKIDEvery). One fetch runs at a time, bounded by
// keyFetchTimeout; requests that need it wait for that one.
type jwtVerifier struct {
	cfg    config.OAuth
	client *http.Client
	log    *slog.Logger
	parser *jwt.Parser
	life   context.Context // ends a fetch still running when the verifier is replaced
	stop   context.CancelFunc

	mu       sync.Mutex
	keys     keyfunc.Keyfunc // nil until a fetch succeeded
	fetched  time.Time       // when keys were fetched
	inflight chan struct{}   // closed when the running fetch ends; nil when none runs
	failures int             // fetches failed in a row
	nextTry  time.Time       // after a failure, no fetch before this
	lastErr  error           // why the last fetch failed
	kidFetch time.Time       // when a fetch for an unknown kid last started
}

func newJWTVerifier(cfg config.OAuth, log *slog.Logger) *jwtVerifier {
	life, stop := context.WithCancel(context.Background())
	return &jwtVerifier{
		cfg:    cfg,
		client: &http.Client{Timeout: keyFetchTimeout},
		log:    log,
		life:   life,
		stop:   stop,
		parser: jwt.NewParser(
			jwt.WithValidMethods(allowedAlgs),
			jwt.WithLeeway(leeway),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
		),
	}
}

func (v *jwtVerifier) close() { v.stop() }

// errIssuerUnavailable is a token that could not be checked because the
// issuer's keys could not be fetched: 503, not 401.
var errIssuerUnavailable = errors.New("the issuer's signing keys are not available")

// keyfunc is the jwt.Keyfunc of one request. The parser calls it only for a
// well-formed token with an allowed algorithm, so garbage never makes the
// hub fetch anything.
func (v *jwtVerifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		keys, err := v.current(ctx)
		if err != nil {
			return nil, err
		}
		key, err := keys.KeyfuncCtx(ctx)(t)
		if errors.Is(err, jwkset.ErrKeyNotFound) {
			if fresh := v.refetchForKID(ctx); fresh != nil {
				return fresh.KeyfuncCtx(ctx)(t)
			}
		}
		return key, err
	}
}

// current returns the cached keys (starting a background refresh when they
// are old), or waits for a fetch when there are none.
func (v *jwtVerifier) current(ctx context.Context) (keyfunc.Keyfunc, error) {
	v.mu.Lock()
	now := time.Now()
	if v.keys != nil {
		if v.inflight == nil && now.Sub(v.fetched) > keysRefreshEvery && !now.Before(v.nextTry) {
			v.startFetch()
		}
		keys := v.keys
		v.mu.Unlock()
		return keys, nil
	}
	if v.inflight == nil {
		if now.Before(v.nextTry) {
			err := v.lastErr
			v.mu.Unlock()
			return nil, err
		}
		v.startFetch()
	}
	done := v.inflight
	v.mu.Unlock()
	return v.await(ctx, done)
}

// refetchForKID waits for a fetch of the key set for a token whose kid it
// lacks: one already running, or a new one at most once per
// unknownKIDEvery. It returns nil when no fetch is allowed or it failed.
func (v *jwtVerifier) refetchForKID(ctx context.Context) keyfunc.Keyfunc {
	v.mu.Lock()
	if v.inflight == nil {
		now := time.Now()
		if now.Sub(v.kidFetch) < unknownKIDEvery || now.Before(v.nextTry) {
			v.mu.Unlock()
			return nil
		}
		v.kidFetch = now
		v.startFetch()
	}
	done := v.inflight
	v.mu.Unlock()
	keys, _ := v.await(ctx, done)
	return keys
}

// await waits for the running fetch (bounded by keyFetchTimeout) or the
// request's end, and returns the keys then cached.
func (v *jwtVerifier) await(ctx context.Context, done <-chan struct{}) (keyfunc.Keyfunc, error) {
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", errIssuerUnavailable, ctx.Err())
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys != nil {
		return v.keys, nil
	}
	return nil, v.lastErr
}

// startFetch starts the one fetch of the key set, in the background so
// that no request's end cuts it short for the others. v.mu is held.
func (v *jwtVerifier) startFetch() {
	done := make(chan struct{})
	v.inflight = done
	go func() {
		ctx, cancel := context.WithTimeout(v.life, keyFetchTimeout)
		keys, err := v.fetchKeys(ctx)
		cancel()
		v.mu.Lock()
		defer v.mu.Unlock()
		now := time.Now()
		if err != nil {
			backoff := min(fetchBackoffMax, fetchBackoffMin<<min(v.failures, 8))
			v.failures++
			v.nextTry = now.Add(backoff)
			v.lastErr = fmt.Errorf("%w: %w (retried in %s at the earliest)", errIssuerUnavailable, err, backoff)
			v.log.Warn("auth.oauth: cannot load the issuer's keys", "issuer", v.cfg.Issuer, "err", err, "retry_in", backoff)
		} else {
			v.keys, v.fetched, v.failures, v.nextTry, v.lastErr = keys, now, 0, time.Time{}, nil
		}
		v.inflight = nil
		close(done)
	}()
}

// retryAfter is how long a client refused for want of keys should wait.
func (v *jwtVerifier) retryAfter() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return max(time.Second, time.Until(v.nextTry))
}

// fetchKeys discovers the key set's URL (unless auth.oauth.jwks_url names
// it) and fetches the set. Keys of types the hub cannot use are skipped.
func (v *jwtVerifier) fetchKeys(ctx context.Context) (keyfunc.Keyfunc, error) {
	jwksURL := v.cfg.JWKSURL
	if jwksURL == "" {
		var err error
		if jwksURL, err = discoverJWKS(ctx, v.client, v.cfg.Issuer); err != nil {
			return nil, err
		}
	}
	var set jwkset.JWKSMarshal
	status, err := getJSON(ctx, v.client, jwksURL, &set)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		return nil, fmt.Errorf("%s: HTTP %d", jwksURL, status)
	}
	store := jwkset.NewMemoryStorage()
	for _, m := range set.Keys {
		jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		switch {
		case errors.Is(err, jwkset.ErrUnsupportedKey):
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: key %q: %w", jwksURL, m.KID, err)
		}
		if err := store.KeyWrite(ctx, jwk); err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", jwksURL, m.KID, err)
		}
	}
	return keyfunc.New(keyfunc.Options{Storage: store})
}

// verify checks a JWT access token and returns its principal. audiences
// are the `aud` values accepted for this request.
func (v *jwtVerifier) verify(ctx context.Context, token string, audiences []string) (*hub.Principal, error) {
	claims := jwt.MapClaims{}
	parsed, err := v.parser.ParseWithClaims(token, claims, v.keyfunc(ctx))
	if errors.Is(err, errIssuerUnavailable) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	switch typ, _ := parsed.Header["typ"].(string); strings.ToLower(typ) {
	case "", "jwt", "at+jwt", "application/at+jwt":
	default:
		return nil, fmt.Errorf("%w: typ %q is not an access token (RFC 9068: at+jwt)", auth.ErrInvalidToken, typ)
	}
	iss, _ := claims.GetIssuer()
	if !sameIssuer(iss, v.cfg.Issuer) {
		return nil, fmt.Errorf("%w: issuer %q is not auth.oauth.issuer", auth.ErrInvalidToken, iss)
	}
	aud, _ := claims.GetAudience()
	if !anyIn(aud, audiences) {
		return nil, fmt.Errorf("%w: audience %q does not name this hub (%s)", auth.ErrInvalidToken, []string(aud), strings.Join(audiences, " or "))
	}
	p, err := oauthPrincipal(iss, claims)
	if err != nil {
		return nil, err
	}
	if v.cfg.ToolsetClaim != "" {
		p.Restricted = true
		p.Toolsets = stringsAt(claims, v.cfg.ToolsetClaim)
	}
	return p, nil
}

// missingScopes lists the required scopes p lacks.
func (v *jwtVerifier) missingScopes(p *hub.Principal) []string {
	var missing []string
	for _, s := range v.cfg.RequiredScopes {
		if !strings.Contains(" "+strings.Join(p.Scopes, " ")+" ", " "+s+" ") {
			missing = append(missing, s)
		}
	}
	return missing
}

// errNoSubject is a valid token that names nobody: it cannot own a
// session nor have a rate limit of its own.
var errNoSubject = &tokenError{"the access token has no sub, client_id or azp claim: the hub cannot tell whose it is"}

// tokenError is why a token was refused, fit for a WWW-Authenticate
// error_description (fixed text: no value from the token).
type tokenError struct{ description string }

func (e *tokenError) Error() string { return e.description }

// oauthPrincipal is who a verified token of issuer iss stands for: its
// subject (RFC 9068 requires sub), or, for a client acting for itself
// (client credentials, no sub), its client. The kinds are namespaced apart,
// so that client_id=alice is not sub=alice.
func oauthPrincipal(iss string, claims jwt.MapClaims) (*hub.Principal, error) {
	p := &hub.Principal{Kind: hub.PrincipalOAuth, Scopes: scopesOf(claims)}
	if sub := stringClaim(claims, "sub"); sub != "" {
		p.Name, p.ID = sub, config.OAuthIDPrefix+iss+"#"+sub
		return p, nil
	}
	client := stringClaim(claims, "client_id")
	if client == "" {
		client = stringClaim(claims, "azp")
	}
	if client == "" {
		return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, errNoSubject)
	}
	p.Name, p.ID = client, config.ClientIDPrefix+iss+"#"+client
	return p, nil
}

// stringClaim is a string claim, or "".
func stringClaim(claims jwt.MapClaims, name string) string {
	s, _ := claims[name].(string)
	return s
}

// sameIssuer compares issuer URLs, ignoring one trailing slash.
func sameIssuer(a, b string) bool {
	return a != "" && strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

func anyIn(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}

// scopesOf reads `scope` (RFC 9068: space-separated) or `scp` (a list, as
// some issuers write it).
func scopesOf(claims jwt.MapClaims) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	return stringsAt(claims, "scp")
}

// stringsAt reads a claim that is a string or a list of strings; a dotted
// path reaches into nested objects (realm_access.roles).
func stringsAt(claims map[string]any, path string) []string {
	var v any = claims
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// discoverJWKS reads the issuer's metadata and returns its jwks_uri.
//
// go-sdk's auth.GetAuthServerMetadata tries the same URLs, but it is a
// client's check: it refuses an issuer that does not offer PKCE, which says
// nothing about the keys a resource server needs.
//
// The first document that names this issuer and a usable jwks_uri wins; one
// that is missing, broken or names another issuer only moves on to the
// next, and the error lists what each said.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	var problems []string
	for _, metaURL := range metadataURLs(issuer) {
		var meta oauthex.AuthServerMeta
		status, err := getJSON(ctx, c, metaURL, &meta)
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case status != http.StatusOK:
			problems = append(problems, fmt.Sprintf("%s: HTTP %d", metaURL, status))
		case !sameIssuer(meta.Issuer, issuer):
			problems = append(problems, fmt.Sprintf("%s names issuer %q", metaURL, meta.Issuer))
		case meta.JWKSURI == "":
			problems = append(problems, fmt.Sprintf("%s has no jwks_uri", metaURL))
		default:
			if err := config.HTTPSOrLoopback(meta.JWKSURI); err != nil {
				problems = append(problems, fmt.Sprintf("%s: jwks_uri: %v", metaURL, err))
				continue
			}
			return meta.JWKSURI, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("no usable authorization server metadata for %s (%s): check auth.oauth.issuer, or set auth.oauth.jwks_url", issuer, strings.Join(problems, "; "))
}

// metadataURLs are where an issuer's metadata may be: RFC 8414 (with path
// insertion), then OpenID Connect discovery (inserted and appended), the
// order of the MCP authorization spec.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.Trim(u.Path, "/")
	at := func(p string) string {
		c := *u
		c.Path, c.RawPath = p, ""
		return c.String()
	}
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server/" + path),
		at("/.well-known/openid-configuration/" + path),
		at("/" + path + "/.well-known/openid-configuration"),
	}
}

// getJSON fetches a JSON document into v. A status other than 200 is
// returned without an error; network and decoding failures are errors.
func getJSON(ctx context.Context, c *http.Client, u string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s: %v", u, err)
	}
	return resp.StatusCode, nil
}

// wellKnownPRM is the RFC 9728 metadata path; the metadata of the resource
// at /mcp is at wellKnownPRM + "/mcp".
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// servePRM answers the protected resource metadata (RFC 9728) of the
// resource named by the path after wellKnownPRM (none: the hub's origin).
// It names the issuer, so a client knows where to log in.
func (g *Gateway) servePRM(w http.ResponseWriter, r *http.Request) {
	o := g.authn().oauth
	if o == nil {
		http.NotFound(w, r)
		return
	}
	resource := strings.TrimPrefix(r.URL.Path, wellKnownPRM)
	if resource != "" && resource != "/mcp" && !strings.HasPrefix(resource, "/mcp/") {
		http.NotFound(w, r)
		return
	}
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resourceURL(r, resource, o.cfg.Audience),
		AuthorizationServers:   []string{o.cfg.Issuer},
		ScopesSupported:        o.cfg.RequiredScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcp-hub",
	}).ServeHTTP(w, r)
}

// resourceMetadataURL is the metadata URL for a 401's WWW-Authenticate:
// the path-suffixed form for the MCP endpoint the request went to.
func resourceMetadataURL(r *http.Request) string {
	suffix := ""
	if r.URL.Path == "/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/") {
		suffix = r.URL.Path
	}
	return origin(r) + wellKnownPRM + suffix
}

// resourceURL is the URL of the resource at path on this hub, as the client
// reached it. The configured audience is used instead when it names the
// same host and path, since behind a proxy it has the right scheme.
func resourceURL(r *http.Request, path, audience string) string {
	derived := origin(r) + path
	a, errA := url.Parse(audience)
	d, errD := url.Parse(derived)
	if errA == nil && errD == nil && a.Host == d.Host && strings.TrimSuffix(a.Path, "/") == strings.TrimSuffix(d.Path, "/") {
		return audience
	}
	return derived
}

// origin is scheme://host of the request, as its client addressed it.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// audiencesFor are the `aud` values a token may carry on this request: the
// configured audience, and on /mcp/<toolset> also <audience>/<toolset>
// (what a client asks the issuer for when it connects to that path).
func audiencesFor(r *http.Request, audience string) []string {
	if ts := r.PathValue("toolset"); ts != "" {
		return []string{audience, strings.TrimSuffix(audience, "/") + "/" + ts}
	}
	return []string{audience}
}

// claimName is the configured toolset claim, for messages.
func (v *jwtVerifier) claimName() string {
	if v == nil || v.cfg.ToolsetClaim == "" {
		return "toolset"
	}
	return v.cfg.ToolsetClaim
}

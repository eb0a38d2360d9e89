package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/auth"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
	"github.com/mcp-hub/mcp-hub/internal/version"
)

// OAuth 2.1 for streamable HTTP upstreams (the MCP authorization spec).
//
// The flow itself is go-sdk's auth.AuthorizationCodeHandler: protected
// resource and authorization server discovery, Client ID Metadata
// Documents, pre-registered clients, Dynamic Client Registration, PKCE,
// resource indicators, the RFC 9207 iss check and the scope union of a
// step-up. oauthClient wraps it with what a long-running hub needs on top:
//
//   - tokens and the client registration live in a tokenstore shared by
//     every mcp-hub process, keyed by server name and URL;
//   - an access token is refreshed shortly before it expires, and once
//     after the server refuses it (401), under the store's lock so that two
//     processes never spend the same refresh token;
//   - the browser flow runs only in `mcp-hub login`, or for a step-up (403
//     insufficient_scope) in an interactive process; anywhere else a server
//     without a usable token is needs_login, and a login made meanwhile is
//     picked up from the store within a PollInterval;
//   - a step-up is tried at most once per scope set and never for scopes
//     already granted, so a server that keeps refusing cannot loop it.

// OAuthOptions say how this process handles upstream authorization.
type OAuthOptions struct {
	// Store keeps tokens and client registrations. Nil turns OAuth off:
	// a 401 is then an error like any other.
	Store *tokenstore.Store
	// Interactive lets a server's demand for more scope (403
	// insufficient_scope) run the browser flow in this process. Otherwise
	// the server is reported needs_login with the scope it wants.
	Interactive bool
	// Browser opens the authorization URL (default OpenBrowser).
	Browser func(ctx context.Context, url string) error
	// Prompt gets the lines a person must read during a browser flow (the
	// URL to open). Nil: they go to the log.
	Prompt io.Writer
	// Timeout bounds how long a browser flow waits for the redirect
	// (default 5 minutes).
	Timeout time.Duration
	// PollInterval is how often a needs_login server looks for a new login
	// in the store (default 1s).
	PollInterval time.Duration
	// HTTPClient makes the requests to authorization servers: metadata,
	// registration, tokens (default: a client with a 30 s timeout over
	// Options.HTTPTransport). These are other origins than the MCP
	// server's by design, so this client is not scoped to it; it never
	// carries the server's configured headers nor its access token (those
	// go through the server's own origin-scoped client only), and the
	// refresh token and client secret go to the token endpoint only.
	HTTPClient *http.Client
}

// defaults fills in what is unset; base is the transport under the
// default HTTPClient (nil: http.DefaultTransport).
func (o *OAuthOptions) defaults(base http.RoundTripper) {
	if o.Browser == nil {
		o.Browser = OpenBrowser
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.HTTPClient == nil {
		// No keep-alive: the few requests of a flow are spread over the
		// minutes a person takes to consent, and a connection the server
		// closed meanwhile would fail the token exchange (a POST is not
		// retried).
		if base == nil {
			base = http.DefaultTransport
		}
		if t, ok := base.(*http.Transport); ok {
			t = t.Clone()
			t.DisableKeepAlives = true
			base = t
		}
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: base}
	}
}

// NeedsLoginError says that a server has no usable token and this process
// will not open a browser for it. It is retryable: a login made by
// `mcp-hub login NAME` is picked up without a restart.
type NeedsLoginError struct {
	Server string
	Reason string
	// Scopes is what the server asked for when it refused for lack of
	// scope (403 insufficient_scope).
	Scopes []string
}

func (e *NeedsLoginError) Error() string {
	msg := fmt.Sprintf("server '%s' needs authorization", e.Server)
	if len(e.Scopes) > 0 {
		msg += fmt.Sprintf(" with scope %q", strings.Join(e.Scopes, " "))
	}
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg + fmt.Sprintf(": run `mcp-hub login %s`; a running hub picks the login up within seconds", e.Server)
}

// errStaleRegistration: the stored client registration belongs to another
// authorization server than the one the server now names.
var errStaleRegistration = errors.New("the stored client registration is for another authorization server")

const (
	// refreshTimeout bounds a refresh made outside any request's context.
	refreshTimeout = 30 * time.Second
	// maxRefreshMargin is how long before its expiry a token is renewed;
	// short-lived tokens renew at a quarter of their life before.
	maxRefreshMargin = time.Minute
	// freshlyRefused: a token the server refuses within this long of
	// being refreshed is not refreshed again (no refresh loop).
	freshlyRefused = 10 * time.Second
)

// oauthClient is one upstream's auth.OAuthHandler.
type oauthClient struct {
	server, url string
	cfg         config.UpstreamOAuth
	opts        OAuthOptions
	log         *slog.Logger
	learn       func(secrets ...string) // tells the redactors
	// serverTransport carries the requests to the MCP server (under its
	// origin-scoped client).
	serverTransport http.RoundTripper

	// protected is set once the server asked for a token, or a token is
	// stored for it: until then requests carry no Authorization header
	// and cost no store access.
	protected atomic.Bool
	// flow admits one authorization decision (and browser flow) at a time.
	flow chan struct{}

	mu          sync.Mutex
	tok         *tokenstore.Token // the token in use
	ignoreStore bool              // login: do not use a stored token
	authorized  bool              // a browser flow succeeded in this process
	dead        string            // a refresh token the authorization server refused
	refreshed   string            // the access token of this process's last refresh
	refreshedAt time.Time
	steppedUp   map[string]bool // scope sets a step-up already asked for
	stale       string          // fingerprint of the stored token when the server went needs_login
	// loginFailed is why the authorization of a login (ignoreStore) failed.
	// A login runs one authorization: go-sdk's client falls back from
	// server/discover to initialize on any error, and that second 401
	// must end with this error, not with a second registration and
	// browser.
	loginFailed error
}

func newOAuthClient(u *Upstream) *oauthClient {
	o := &oauthClient{
		server:          u.cfg.Name,
		url:             u.cfg.URL,
		opts:            u.opts.OAuth,
		log:             u.log,
		flow:            make(chan struct{}, 1),
		steppedUp:       map[string]bool{},
		serverTransport: u.opts.HTTPTransport,
		learn: func(s ...string) {
			u.redact.Add(s...)
			u.opts.Redactor.Add(s...)
		},
	}
	if o.serverTransport == nil {
		o.serverTransport = http.DefaultTransport
	}
	if u.cfg.OAuth != nil {
		o.cfg = *u.cfg.OAuth
	}
	o.opts.defaults(u.opts.HTTPTransport)
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	if rec, err := o.opts.Store.Load(ctx, o.server, o.url); err == nil && rec != nil && rec.Token != nil {
		o.protected.Store(true)
		o.adopt(rec.Token)
		if rec.Client != nil {
			o.learn(rec.Client.Secret)
		}
	}
	return o
}

// oauthHandler is the handler for the SDK transport, nil (an untyped nil,
// as the transport checks) when the server does not use OAuth.
func (u *Upstream) oauthHandler() auth.OAuthHandler {
	if u.oauth == nil {
		return nil
	}
	return u.oauth
}

// adopt makes t the token in use.
func (o *oauthClient) adopt(t *tokenstore.Token) {
	o.learn(t.AccessToken, t.RefreshToken)
	o.mu.Lock()
	o.tok = t
	o.mu.Unlock()
}

// TokenSource is part of auth.OAuthHandler: the transport asks it for a
// token before every request.
func (o *oauthClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	o.mu.Lock()
	skip := o.ignoreStore && !o.authorized
	o.mu.Unlock()
	if skip || !o.protected.Load() {
		return nil, nil
	}
	return tokenSourceFunc(o.token), nil
}

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// token is the token for the next request: the one in use while it is
// good for a while yet, else the stored one, refreshed if it is about to
// expire. A server without a usable token gets a *NeedsLoginError, which
// fails the request before it is sent.
func (o *oauthClient) token() (*oauth2.Token, error) {
	o.mu.Lock()
	t := o.tok
	o.mu.Unlock()
	if t == nil || !usable(t, time.Now()) {
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		var err error
		if t, err = o.renew(ctx, ""); err != nil {
			return nil, err
		}
	}
	return &oauth2.Token{AccessToken: t.AccessToken, TokenType: "Bearer", Expiry: t.Expiry}, nil
}

// usable reports whether t is good for more than its refresh margin.
func usable(t *tokenstore.Token, now time.Time) bool {
	if t.AccessToken == "" {
		return false
	}
	if t.Expiry.IsZero() {
		return true
	}
	margin := maxRefreshMargin
	if !t.Obtained.IsZero() {
		margin = min(margin, t.Expiry.Sub(t.Obtained)/4)
	}
	return now.Add(margin).Before(t.Expiry)
}

// renew returns a usable token from the store, refreshing the stored one
// if it is about to expire or is the one the server just refused
// (rejected), all under the store's lock: a token another process wrote
// meanwhile is taken as it is.
func (o *oauthClient) renew(ctx context.Context, rejected string) (*tokenstore.Token, error) {
	var out *tokenstore.Token
	_, err := o.opts.Store.Update(ctx, o.server, o.url, func(r *tokenstore.Record) (*tokenstore.Record, error) {
		if r == nil || r.Token == nil || r.Token.AccessToken == "" {
			return nil, o.needsLogin(nil, "not logged in", nil)
		}
		t := r.Token
		if t.AccessToken != rejected && usable(t, time.Now()) {
			out = t
			return nil, nil
		}
		o.mu.Lock()
		dead, loop := o.dead, rejected != "" && rejected == o.refreshed && time.Since(o.refreshedAt) < freshlyRefused
		o.mu.Unlock()
		switch {
		case loop:
			return nil, o.needsLogin(t, "the server refused a token refreshed moments ago", nil)
		case t.RefreshToken == "":
			return nil, o.needsLogin(t, "the token expired and the authorization server gave no refresh token", nil)
		case t.RefreshToken == dead:
			return nil, o.needsLogin(t, "the authorization server refused the refresh token", nil)
		case r.Client == nil || r.Client.TokenURL == "":
			return nil, o.needsLogin(t, "no client registration is stored", nil)
		}
		nt, err := o.refresh(ctx, r.Client, t)
		if err != nil {
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && refusedGrant(re) {
				o.mu.Lock()
				o.dead = t.RefreshToken
				o.mu.Unlock()
				return nil, o.needsLogin(t, "refreshing the token failed: "+oauthErrorText(re), nil)
			}
			return nil, fmt.Errorf("server '%s': refreshing the OAuth token: %w", o.server, err)
		}
		o.mu.Lock()
		o.refreshed, o.refreshedAt = nt.AccessToken, time.Now()
		o.mu.Unlock()
		o.log.Info("OAuth token refreshed", "expires_in", time.Until(nt.Expiry).Round(time.Second))
		r.Token, out = nt, nt
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	o.adopt(out)
	return out, nil
}

// refresh runs the refresh_token grant with the stored client.
func (o *oauthClient) refresh(ctx context.Context, c *tokenstore.Client, t *tokenstore.Token) (*tokenstore.Token, error) {
	cfg := &oauth2.Config{
		ClientID:     c.ID,
		ClientSecret: c.Secret,
		Endpoint:     oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: oauth2.AuthStyle(c.AuthStyle)},
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, o.opts.HTTPClient)
	tok, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: t.RefreshToken}).Token()
	if err != nil {
		return nil, err
	}
	nt := storedToken(tok, t.Scopes)
	if nt.RefreshToken == "" {
		nt.RefreshToken = t.RefreshToken
	}
	return nt, nil
}

// refusedGrant reports whether the token endpoint refused the grant for
// good (as opposed to failing for now).
func refusedGrant(re *oauth2.RetrieveError) bool {
	switch re.ErrorCode {
	case "invalid_grant", "invalid_client", "unauthorized_client", "unsupported_grant_type", "invalid_scope":
		return true
	}
	return re.Response != nil && (re.Response.StatusCode == http.StatusBadRequest || re.Response.StatusCode == http.StatusUnauthorized)
}

// oauthErrorText is the token endpoint's error code and description,
// without the response body oauth2's own message carries.
func oauthErrorText(re *oauth2.RetrieveError) string {
	switch {
	case re.ErrorCode != "" && re.ErrorDescription != "":
		return re.ErrorCode + ": " + re.ErrorDescription
	case re.ErrorCode != "":
		return re.ErrorCode
	case re.Response != nil:
		return re.Response.Status
	}
	return "refused"
}

// storedToken converts a token endpoint's answer; granted is what was
// asked for, used when the answer does not say which scopes it grants.
func storedToken(tok *oauth2.Token, granted []string) *tokenstore.Token {
	t := &tokenstore.Token{
		AccessToken:  tok.AccessToken,
		TokenType:    tok.TokenType,
		RefreshToken: tok.RefreshToken,
		Expiry:       tok.Expiry.UTC(),
		Obtained:     time.Now().UTC(),
		Scopes:       granted,
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		t.Scopes = strings.Fields(s)
	}
	return t
}

// needsLogin makes the error, and remembers which stored token it was
// about, so that waitForLogin knows a new one when it sees it.
func (o *oauthClient) needsLogin(stored *tokenstore.Token, reason string, scopes []string) *NeedsLoginError {
	o.mu.Lock()
	o.stale = fingerprint(stored)
	o.mu.Unlock()
	return &NeedsLoginError{Server: o.server, Reason: reason, Scopes: scopes}
}

func fingerprint(t *tokenstore.Token) string {
	if t == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(t.AccessToken + "\x00" + t.RefreshToken))
	return hex.EncodeToString(sum[:])
}

// waitForLogin returns once the store holds a token other than the one
// the server was found to need a login with, or ctx ends.
func (o *oauthClient) waitForLogin(ctx context.Context) {
	o.mu.Lock()
	stale := o.stale
	o.mu.Unlock()
	tick := time.NewTicker(o.opts.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rec, err := o.opts.Store.Load(ctx, o.server, o.url)
		if err != nil || rec == nil || rec.Token == nil {
			continue
		}
		if fp := fingerprint(rec.Token); fp != stale {
			o.log.Info("found a new login in the token store")
			o.mu.Lock()
			o.dead = ""
			o.mu.Unlock()
			o.adopt(rec.Token)
			return
		}
	}
}

// Authorize is part of auth.OAuthHandler: the transport calls it when a
// request gets 401 or 403, and sends the request again if it returns nil.
func (o *oauthClient) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	o.protected.Store(true)
	select {
	case o.flow <- struct{}{}:
		defer func() { <-o.flow }()
	case <-ctx.Done():
		resp.Body.Close()
		return ctx.Err()
	}
	o.mu.Lock()
	failed := o.loginFailed
	o.mu.Unlock()
	if failed != nil {
		discard(resp)
		return failed
	}
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden {
		if challengeParam(challenges, "error") != "insufficient_scope" {
			discard(resp)
			return nil // as go-sdk does: the repeated request fails with the 403
		}
		return o.stepUp(ctx, req, resp, sent, strings.Fields(challengeParam(challenges, "scope")))
	}
	o.mu.Lock()
	loggingIn := o.ignoreStore && !o.authorized
	o.mu.Unlock()
	if loggingIn {
		return o.authorize(ctx, req, resp, nil)
	}
	_, err := o.renew(ctx, sent)
	if err == nil {
		discard(resp)
		return nil
	}
	// A token the server refuses although it was just granted, with no way
	// to renew it: the server may have moved to another authorization
	// server (its metadata now names it), or revoked the grant. A process
	// that may open a browser authorizes once more (authorize registers
	// anew where the stored registration belongs to another authorization
	// server); anywhere else it is a login to do.
	key := "401 " + sent
	o.mu.Lock()
	tried := o.steppedUp[key]
	again := errors.As(err, new(*NeedsLoginError)) && (o.opts.Interactive || o.ignoreStore) && sent != "" && !tried
	if again {
		o.steppedUp[key] = true
	}
	o.mu.Unlock()
	if !again {
		discard(resp)
		return err
	}
	o.log.Info("the server refuses the token and it cannot be renewed; authorizing again")
	return o.authorize(ctx, req, resp, nil)
}

// stepUp handles 403 insufficient_scope: a new authorization for the
// scopes granted so far plus those the server asks for, when this process
// may open a browser and it can help.
func (o *oauthClient) stepUp(ctx context.Context, req *http.Request, resp *http.Response, sent string, scopes []string) error {
	o.mu.Lock()
	cur := o.tok
	o.mu.Unlock()
	if cur != nil && sent != "" && cur.AccessToken != sent {
		discard(resp)
		return nil // another request stepped up meanwhile: try its token
	}
	key := strings.Join(slices.Sorted(slices.Values(scopes)), " ")
	o.mu.Lock()
	tried := o.steppedUp[key]
	loggingIn := o.ignoreStore
	o.mu.Unlock()
	switch {
	case cur != nil && len(scopes) > 0 && isSubset(scopes, cur.Scopes):
		discard(resp)
		return o.needsLogin(cur, "the server refuses although the authorization server granted that scope", scopes)
	case !o.opts.Interactive && !loggingIn:
		discard(resp)
		return o.needsLogin(cur, "the server asks for more scope, and this process does not open a browser", scopes)
	case tried:
		discard(resp)
		return o.needsLogin(cur, "the server still refuses after a re-authorization for that scope", scopes)
	}
	o.mu.Lock()
	o.steppedUp[key] = true
	o.mu.Unlock()
	var granted []string
	if cur != nil {
		granted = cur.Scopes
	}
	return o.authorize(ctx, req, resp, granted)
}

func isSubset(want, have []string) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// authorize runs the browser flow through go-sdk's handler and stores
// what it yields. stepUp holds the scopes granted so far when this is a
// step-up (nil for a first authorization).
func (o *oauthClient) authorize(ctx context.Context, req *http.Request, resp *http.Response, stepUp []string) (err error) {
	defer func() {
		o.mu.Lock()
		if err != nil && o.ignoreStore {
			o.loginFailed = err
		}
		o.mu.Unlock()
	}()
	rec, err := o.opts.Store.Load(ctx, o.server, o.url)
	if err != nil {
		discard(resp)
		return err
	}
	var reuse *tokenstore.Client
	if rec != nil && rec.Client != nil && rec.Client.Registration == tokenstore.Dynamic && o.cfg.ClientID == "" {
		reuse = rec.Client
	}
	cb, err := listenCallback(o.server, o.cfg.RedirectPort, reuse)
	if err != nil {
		discard(resp)
		return err
	}
	defer cb.Close()
	if cb.redirectURL() != redirectOf(reuse) {
		reuse = nil // its redirect URI cannot be served now: register anew
	}
	for {
		h, err := auth.NewAuthorizationCodeHandler(o.handlerConfig(cb, reuse, stepUp))
		if err != nil {
			discard(resp)
			return fmt.Errorf("server '%s': %w", o.server, err)
		}
		err = h.Authorize(ctx, req, resp)
		if errors.Is(err, errStaleRegistration) && reuse != nil {
			o.log.Info("the server names another authorization server than the stored registration's; registering anew")
			reuse = nil
			continue
		}
		if err != nil {
			return fmt.Errorf("server '%s': authorization failed: %w", o.server, err)
		}
		o.mu.Lock()
		o.authorized = true
		o.mu.Unlock()
		// The transport now repeats the request that was refused, possibly
		// minutes later: on a pooled connection the server may have closed
		// meanwhile, and a POST that fails so is not retried. Start afresh.
		if t, ok := o.serverTransport.(interface{ CloseIdleConnections() }); ok {
			t.CloseIdleConnections()
		}
		return nil
	}
}

func redirectOf(c *tokenstore.Client) string {
	if c == nil {
		return ""
	}
	return c.RedirectURL
}

// handlerConfig configures go-sdk's handler for one browser flow.
func (o *oauthClient) handlerConfig(cb *callback, reuse *tokenstore.Client, stepUp []string) *auth.AuthorizationCodeHandlerConfig {
	redirect := cb.redirectURL()
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		Client:              o.opts.HTTPClient,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if reuse != nil && endpointOf(args.URL) != reuse.AuthURL {
				return nil, errStaleRegistration
			}
			return cb.wait(ctx, args.URL, o.opts, o.log)
		},
		ScopeFilter: func(discovered []string) []string {
			switch {
			case stepUp != nil:
				return union(stepUp, discovered)
			case len(o.cfg.Scopes) > 0:
				return o.cfg.Scopes
			}
			return discovered
		},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := o.save(c, tok, reuse); err != nil {
				return nil, err
			}
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	if o.cfg.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.cfg.ClientMetadataURL}
	}
	switch {
	case o.cfg.ClientID != "":
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.cfg.ClientID}
		if o.cfg.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.cfg.ClientSecret}
		}
	case reuse != nil:
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: reuse.ID}
		if reuse.Secret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: reuse.Secret}
		}
	default:
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    "mcp-hub",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		}
	}
	return cfg
}

// endpointOf is a URL without its query: an authorization endpoint.
func endpointOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// save stores the client and the token a browser flow yielded.
func (o *oauthClient) save(c *oauth2.Config, tok *oauth2.Token, reuse *tokenstore.Client) error {
	kind := tokenstore.Dynamic
	switch {
	case o.cfg.ClientID != "" && c.ClientID == o.cfg.ClientID:
		kind = tokenstore.Preregistered
	case o.cfg.ClientMetadataURL != "" && c.ClientID == o.cfg.ClientMetadataURL:
		kind = tokenstore.MetadataDoc
	}
	client := &tokenstore.Client{
		ID:           c.ClientID,
		Secret:       c.ClientSecret,
		Registration: kind,
		AuthStyle:    int(c.Endpoint.AuthStyle),
		RedirectURL:  c.RedirectURL,
		AuthURL:      c.Endpoint.AuthURL,
		TokenURL:     c.Endpoint.TokenURL,
		Scopes:       c.Scopes,
	}
	t := storedToken(tok, c.Scopes)
	o.learn(client.Secret, t.AccessToken, t.RefreshToken)
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	_, err := o.opts.Store.Update(ctx, o.server, o.url, func(*tokenstore.Record) (*tokenstore.Record, error) {
		return &tokenstore.Record{Client: client, Token: t}, nil
	})
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.dead = ""
	o.mu.Unlock()
	o.adopt(t)
	return nil
}

// LoginResult is what `mcp-hub login` reports.
type LoginResult struct {
	// Authorized is false when the server never asked for authorization.
	Authorized   bool
	Scopes       []string
	Expiry       time.Time // zero: the token does not say
	Refreshable  bool
	Registration string // tokenstore.Dynamic, Preregistered or MetadataDoc
	ClientID     string
	// Tools is how many tools the server listed with the new token.
	Tools int
}

// Login runs the browser flow for a streamable HTTP server and stores its
// token, ignoring any token stored before: it connects, lists the tools,
// and authorizes when the server asks (401, or 403 insufficient_scope).
// An error after a successful authorization comes with the result.
func Login(ctx context.Context, cfg config.Upstream, opts Options) (*LoginResult, error) {
	if cfg.Kind() != config.TransportStreamable {
		return nil, fmt.Errorf("server '%s' is not a streamable HTTP server: only those use OAuth", cfg.Name)
	}
	if config.HasAuthorizationHeader(cfg.Headers) {
		return nil, fmt.Errorf("server '%s' has a static Authorization header in its config: remove it to use OAuth", cfg.Name)
	}
	if opts.OAuth.Store == nil {
		return nil, errors.New("login needs a token store")
	}
	opts.OAuth.Interactive = true
	opts.defaults()
	u := &Upstream{cfg: cfg, opts: opts, log: opts.Logger.With("server", cfg.Name), redact: redact.New(opts.Secrets, cfg.SecretValues())}
	o := newOAuthClient(u)
	o.ignoreStore = true
	o.protected.Store(true)
	u.oauth = o

	httpClient, err := u.httpClient(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("server '%s': %w", cfg.Name, err)
	}
	transport := &mcp.StreamableClientTransport{
		Endpoint:             cfg.URL,
		HTTPClient:           httpClient,
		OAuthHandler:         o,
		MaxRetries:           sseRetries,
		MaxEventSize:         u.maxEventSize(),
		DisableStandaloneSSE: true,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub", Version: version.Version}, &mcp.ClientOptions{Logger: opts.SDKLogger})
	tools := 0
	cs, err := client.Connect(ctx, transport, u.sessionOptions())
	if err == nil {
		if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Tools != nil {
			for _, lerr := range cs.Tools(ctx, nil) {
				if lerr != nil {
					err = fmt.Errorf("tools/list: %w", lerr)
					break
				}
				tools++
			}
		}
		cs.Close()
	}
	o.mu.Lock()
	res := &LoginResult{Authorized: o.authorized, Tools: tools}
	if t := o.tok; o.authorized && t != nil {
		res.Scopes, res.Expiry, res.Refreshable = t.Scopes, t.Expiry, t.RefreshToken != ""
	}
	o.mu.Unlock()
	if res.Authorized {
		if rec, lerr := o.opts.Store.Load(ctx, o.server, o.url); lerr == nil && rec != nil && rec.Client != nil {
			res.Registration, res.ClientID = rec.Client.Registration, rec.Client.ID
		}
	}
	if err != nil {
		return res, u.redact.Error(fmt.Errorf("server '%s': %w", cfg.Name, err))
	}
	return res, nil
}

// needsLogin records that a call found the server needs a login, and
// returns the call's error. The session stays: calls that need no more
// than the token grants still work, and a login made meanwhile is taken
// up by the next request (the token source reads the store again).
func (u *Upstream) needsLogin(err error) error {
	var nl *NeedsLoginError
	errors.As(err, &nl)
	u.mu.Lock()
	if u.state == StateReady {
		u.state = StateNeedsLogin
	}
	u.lastErr = nl
	watch := !u.watching && u.state == StateNeedsLogin && u.session != nil
	if watch {
		u.watching = true
	}
	life := u.life
	u.mu.Unlock()
	if watch && life != nil {
		go u.watchLogin(life)
	}
	return &UnavailableError{Server: u.cfg.Name, State: StateNeedsLogin, Cause: nl}
}

// watchLogin turns a connected server that needed a login back to ready
// once a new login is stored.
func (u *Upstream) watchLogin(ctx context.Context) {
	u.oauth.waitForLogin(ctx)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.watching = false
	if u.state == StateNeedsLogin && u.session != nil {
		u.state, u.lastErr = StateReady, nil
	}
}

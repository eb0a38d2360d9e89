package upstream

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/auth"

	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// The browser side of an authorization: a listener on 127.0.0.1 that
// receives the authorization server's redirect at /callback, and the
// opener that shows the user the authorization page.

// AuthorizationDeniedError is the authorization server's error redirect,
// typically the user refusing consent (access_denied).
type AuthorizationDeniedError struct {
	Code, Description string
}

func (e *AuthorizationDeniedError) Error() string {
	msg := "the authorization server refused: " + e.Code
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	return msg
}

// callback is the redirect listener of one authorization.
type callback struct {
	server string
	ln     net.Listener
	srv    *http.Server

	mu    sync.Mutex
	state string              // of the authorization waiting
	got   chan callbackResult // nil when none waits
}

func newCallback(server string, ln net.Listener) *callback {
	c := &callback{server: server, ln: ln}
	c.srv = &http.Server{Handler: c.handler(), ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln)
	return c
}

// listenCallback listens on 127.0.0.1: on port if set, else on the port of
// reuse's redirect URI when that is free, else on any free port.
func listenCallback(server string, port int, reuse *tokenstore.Client) (*callback, error) {
	if port == 0 && reuse != nil {
		if u, err := url.Parse(reuse.RedirectURL); err == nil {
			if p, err := strconv.Atoi(u.Port()); err == nil {
				if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
					return newCallback(server, ln), nil
				}
			}
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("server '%s': cannot listen for the authorization redirect on 127.0.0.1:%d: %w (free the port, or set another oauth.redirect_port)", server, port, err)
	}
	return newCallback(server, ln), nil
}

func (c *callback) redirectURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/callback", c.ln.Addr().(*net.TCPAddr).Port)
}

func (c *callback) Close() error { return c.srv.Close() }

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// wait shows the user authURL and waits for the redirect. The listener
// stays open after it returns (the caller closes it): a second attempt
// of the same authorization may need it.
func (c *callback) wait(ctx context.Context, authURL string, opts OAuthOptions, log *slog.Logger) (*auth.AuthorizationResult, error) {
	// The URL comes from the authorization server's metadata: it is shown
	// and opened only as a plain http(s) web address, so that a hostile
	// server cannot have the opener run file:, smb: or ms-msdt: handlers.
	authURL, err := browsableURL(authURL)
	if err != nil {
		return nil, fmt.Errorf("server '%s': %w", c.server, err)
	}
	u, _ := url.Parse(authURL)
	state := u.Query().Get("state")
	if state == "" {
		return nil, fmt.Errorf("server '%s': the authorization URL carries no state", c.server)
	}
	got := make(chan callbackResult, 1)
	c.mu.Lock()
	c.state, c.got = state, got
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.got = nil
		c.mu.Unlock()
	}()

	say := func(msg string) {
		if opts.Prompt != nil {
			fmt.Fprintln(opts.Prompt, msg)
		} else {
			log.Warn(msg)
		}
	}
	say(fmt.Sprintf("Authorize mcp-hub for server '%s' in your browser. If none opens, visit:\n\n  %s\n", c.server, authURL))
	if err := opts.Browser(ctx, authURL); err != nil {
		say(fmt.Sprintf("(no browser opened: %v)", err))
	}
	timer := time.NewTimer(opts.Timeout)
	defer timer.Stop()
	select {
	case r := <-got:
		return r.res, r.err
	case <-timer.C:
		return nil, fmt.Errorf("no authorization arrived within %s: run the login again (login --timeout waits longer)", opts.Timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// handler answers the redirect at /callback; the first one with the
// authorization's state counts. One without it (anyone who can reach the
// port can send one) gets a 400 and the authorization keeps waiting.
func (c *callback) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		state, got := c.state, c.got
		c.mu.Unlock()
		if got == nil {
			http.Error(w, "mcp-hub: no authorization is waiting for this redirect", http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "mcp-hub: this redirect's state does not match the authorization waiting (a stale or forged redirect); it is ignored", http.StatusBadRequest)
			return
		}
		var res callbackResult
		switch {
		case q.Get("error") != "":
			// Both end up on a terminal: bounded, without control characters.
			res.err = &AuthorizationDeniedError{
				Code:        clean.Line(q.Get("error"), maxErrorCode),
				Description: clean.Line(q.Get("error_description"), maxErrorDescription),
			}
		case q.Get("code") == "":
			res.err = errors.New("the redirect carries no authorization code")
		default:
			res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if res.err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<!doctype html><title>mcp-hub</title><p>mcp-hub: authorization of server %s failed: %s</p>",
				html.EscapeString(c.server), html.EscapeString(res.err.Error()))
		} else {
			fmt.Fprintf(w, "<!doctype html><title>mcp-hub</title><p>mcp-hub received the authorization for server %s. You can close this page.</p>",
				html.EscapeString(c.server))
		}
		select {
		case got <- res:
		default: // a later redirect: the first one counts
		}
	})
	return mux
}

// OpenBrowser shows url to the user: with $BROWSER (a command that gets
// the URL as its only argument) if set, else the platform's opener. It
// does not wait for the browser.
func OpenBrowser(ctx context.Context, url string) error {
	url, err := browsableURL(url)
	if err != nil {
		return err
	}
	name, args := browserCommand(runtime.GOOS, os.Getenv("BROWSER"), exec.LookPath)
	if name == "" {
		return errors.New("no $BROWSER and no opener (xdg-open) found")
	}
	cmd := exec.Command(name, append(args, url)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// browserCommand picks the opener: $BROWSER, else open (macOS),
// rundll32's FileProtocolHandler (Windows), else xdg-open or wslview when
// installed. The URL goes after the returned arguments.
func browserCommand(goos, browserEnv string, lookPath func(string) (string, error)) (string, []string) {
	if browserEnv != "" {
		return browserEnv, nil
	}
	switch goos {
	case "darwin":
		return "open", nil
	case "windows":
		return "rundll32", []string{"url.dll,FileProtocolHandler"}
	}
	for _, name := range []string{"xdg-open", "wslview"} {
		if _, err := lookPath(name); err == nil {
			return name, nil
		}
	}
	return "", nil
}

// browsableURL returns raw as a web address safe to print and to hand to
// an opener, or an error that does not repeat it: only http and https
// with a host and no user-info (https://good.example@evil.example/ reads
// as good.example), with every byte a URI may not hold percent-encoded.
func browsableURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("the authorization URL is not a valid URL: refusing to open it")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		// url.Parse lower-cases the scheme and admits only [a-z0-9+.-]:
		// safe to print.
		return "", fmt.Errorf("the authorization URL has scheme %q: refusing to open anything but an http or https URL", clean.Line(u.Scheme, 32))
	case u.Opaque != "" || u.Host == "":
		return "", errors.New("the authorization URL has no host: refusing to open it")
	case u.User != nil:
		return "", errors.New("the authorization URL carries user-info (user@host): refusing to open it")
	}
	s := u.String()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; uriChar(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

// uriChar reports whether c may appear unencoded in a URI (RFC 3986:
// unreserved, reserved and '%'). Encoding the rest changes no meaning and
// leaves no quote, space or control byte for a terminal or an opener's
// command line to interpret.
func uriChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0
}

// Bounds of the authorization server's error text that reaches a terminal.
const (
	maxErrorCode        = 64
	maxErrorDescription = 300
)

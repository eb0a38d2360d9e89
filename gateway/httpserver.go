package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/safe"
)

func orDefault[T ~int64 | ~int](v T, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// NewHTTPServer returns the hub's HTTP server: HTTPHandler(extra) with the
// timeouts and limits of the config's http section. `mcp-hub serve --http`
// runs it; so do tests.
func (g *Gateway) NewHTTPServer(extra map[string]http.Handler) *http.Server {
	return g.httpServer(g.HTTPHandler(extra))
}

// NewMetricsServer returns the server of `serve --metrics ADDR`: /metrics
// alone (MetricsHTTPHandler), with the limits of NewHTTPServer.
func (g *Gateway) NewMetricsServer() *http.Server {
	return g.httpServer(g.MetricsHTTPHandler())
}

func (g *Gateway) httpServer(handler http.Handler) *http.Server {
	l := g.Config().HTTP
	return &http.Server{
		Handler:           bodyDeadline(handler, time.Duration(orDefault(l.BodyReadTimeout, config.Duration(config.DefaultBodyReadTimeout)))),
		ReadHeaderTimeout: time.Duration(orDefault(l.ReadHeaderTimeout, config.Duration(config.DefaultReadHeaderTimeout))),
		IdleTimeout:       time.Duration(orDefault(l.IdleTimeout, config.Duration(config.DefaultIdleTimeout))),
		MaxHeaderBytes:    orDefault(l.MaxHeaderBytes, config.DefaultMaxHeaderBytes),
		// net/http's own complaints (a panic it recovered, a TLS
		// handshake) go through the hub's log, and its redaction.
		ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
	}
}

// bodyDeadline gives a request body timeout to read: a client that sends
// its body slowly, or never, ties up a connection and a goroutine for no
// more than that. The deadline is lifted as soon as the body has been
// read, so a long tool call, or the stream that answers it, is not cut.
func bodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body has been read to its
// end. A body that failed keeps it: net/http then closes the connection
// rather than wait for the rest.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// sessionSlots counts the HTTP sessions open, of both eras, against
// max_sessions. A slot is taken before a session is made and given back
// when it ends: a legacy session's when its SDK session ends (closed by
// the client, or after session_idle_timeout), a shared modern Session's
// when it is evicted (modern.go).
type sessionSlots struct {
	mu   sync.Mutex
	open int
}

func (s *sessionSlots) take(limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open >= limit {
		return false
	}
	s.open++
	return true
}

func (s *sessionSlots) release() {
	s.mu.Lock()
	s.open--
	s.mu.Unlock()
}

// Open is how many HTTP sessions are open, of both eras.
func (s *sessionSlots) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// sessionRetryAfter is what a client refused for max_sessions is told to
// wait, in seconds.
const sessionRetryAfter = 10

// refuseSession answers a new session past max_sessions: 503 with
// Retry-After.
func (g *Gateway) refuseSession(w http.ResponseWriter) {
	limit := g.Config().SessionLimit()
	g.log.Warn("new HTTP session refused: max_sessions reached", "max_sessions", limit)
	w.Header().Set("Retry-After", strconv.Itoa(sessionRetryAfter))
	http.Error(w, fmt.Sprintf("Service Unavailable: the hub has %d sessions open (max_sessions); retry in %d s, or raise max_sessions in the config",
		limit, sessionRetryAfter), http.StatusServiceUnavailable)
}

// firstRequest is what a POST without a session id carries.
type firstRequest int

const (
	otherRequest      firstRequest = iota // the SDK answers it, in a session it ends at once
	initializeRequest                     // a session is built for it
	batchRequest                          // refused: a session starts with an initialize alone
	modernRequest                         // a 2026-07-28 request (modern.go)
)

// readFirstRequest reads a POST body once, bounded by max_request_bytes,
// and puts the same bytes back for the SDK. Only an initialize request
// gets a session built (its server, its tool list, the manifest). ok is
// false after an answer was written (413 for a body over the limit, 400
// for one that cannot be read).
func (g *Gateway) readFirstRequest(w http.ResponseWriter, r *http.Request) (kind firstRequest, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.Config().RequestLimit()))
	if err != nil {
		if mbe, is := errors.AsType[*http.MaxBytesError](err); is {
			http.Error(w, fmt.Sprintf("request body exceeds max_request_bytes (%d bytes)", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
		}
		return otherRequest, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return classify(body), true
}

// classify tells a valid initialize request and a batch from anything
// else.
func classify(body []byte) firstRequest {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '[':
		return batchRequest
	case len(body) > 0 && body[0] == '{' && bytes.Contains(body, []byte(modernMetaKey)) && !bytes.Contains(body, []byte(`"initialize"`)):
		return modernRequest
	case len(body) == 0 || body[0] != '{' || !bytes.Contains(body, []byte(`"initialize"`)):
		return otherRequest
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.JSONRPC == "2.0" && msg.Method == "initialize" &&
		len(msg.ID) > 0 && string(msg.ID) != "null" && bytes.HasPrefix(bytes.TrimSpace(msg.Params), []byte("{")) {
		return initializeRequest
	}
	return otherRequest
}

// newHTTPSession builds the session for an initialize request: of the
// toolset the path names (or the principal's default), owned by the
// request's principal. It answers itself when that fails: 403 for a
// toolset the principal may not use, 404 for an unknown one, 500 when
// building panicked (a bug that the catalog's content reached; the panic
// is logged).
func (g *Gateway) newHTTPSession(w http.ResponseWriter, r *http.Request) (s *hub.Session) {
	defer safe.Recover(g.log, "new HTTP session", func(p error) {
		s = nil
		http.Error(w, g.redact.String(p.Error()), http.StatusInternalServerError)
	})
	p := hub.PrincipalFrom(r.Context())
	ts, err := g.hub.ToolsetFor(p, r.PathValue("toolset"))
	if err != nil {
		http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
		return nil
	}
	if p == nil {
		p = anonymous // no auth configured
	}
	// With a session store, the store keeps it (persist).
	s, err = g.hub.NewSession(hub.SessionOptions{Toolset: ts, Principal: p, Persist: g.storeLink.persist(ts, principalID(r))})
	if err != nil {
		http.Error(w, g.redact.String(err.Error()), http.StatusNotFound)
		return nil
	}
	return s
}

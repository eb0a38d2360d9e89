package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/safe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// HTTPLimits is the config's `http:` section: the limits of the hub's
// HTTP server. Zero values take the defaults. None of them cuts a
// long-lived stream (the GET event stream of a session) or a long tool
// call short: those are bounded by session_idle_timeout and the servers'
// call timeouts.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers (10s).
	ReadHeaderTimeout upstream.Duration `yaml:"read_header_timeout"`
	// BodyReadTimeout bounds reading a request's body (30s). It applies
	// to the body only: once it is read the connection has no deadline.
	BodyReadTimeout upstream.Duration `yaml:"body_read_timeout"`
	// IdleTimeout closes a keep-alive connection that has waited this
	// long for its next request (90s).
	IdleTimeout upstream.Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes bounds a request's headers (64 KiB); past it the
	// client gets 431.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
}

// Defaults of HTTPLimits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyReadTimeout   = 30 * time.Second
	DefaultIdleTimeout       = 90 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
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
func (h *Hub) NewHTTPServer(extra map[string]http.Handler) *http.Server {
	return h.httpServer(h.HTTPHandler(extra))
}

// NewMetricsServer returns the server of `serve --metrics ADDR`: /metrics
// alone (MetricsHTTPHandler), with the limits of NewHTTPServer.
func (h *Hub) NewMetricsServer() *http.Server {
	return h.httpServer(h.MetricsHTTPHandler())
}

func (h *Hub) httpServer(handler http.Handler) *http.Server {
	l := h.Config().HTTP
	return &http.Server{
		Handler:           bodyDeadline(handler, time.Duration(orDefault(l.BodyReadTimeout, upstream.Duration(DefaultBodyReadTimeout)))),
		ReadHeaderTimeout: time.Duration(orDefault(l.ReadHeaderTimeout, upstream.Duration(DefaultReadHeaderTimeout))),
		IdleTimeout:       time.Duration(orDefault(l.IdleTimeout, upstream.Duration(DefaultIdleTimeout))),
		MaxHeaderBytes:    orDefault(l.MaxHeaderBytes, DefaultMaxHeaderBytes),
		// net/http's own complaints (a panic it recovered, a TLS
		// handshake) go through the hub's log, and its redaction.
		ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
		// A connection that closes is work done, for LastActivity.
		ConnState: func(_ net.Conn, state http.ConnState) {
			if state == http.StateClosed {
				h.active()
			}
		},
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

// sessionSlots counts the HTTP sessions open, against max_sessions. A slot
// is taken before a session is made and given back when the SDK's session
// ends: closed by the client, or after session_idle_timeout.
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

// Open is how many HTTP sessions are open.
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
func (h *Hub) refuseSession(w http.ResponseWriter) {
	limit := h.Config().SessionLimit()
	h.log.Warn("new HTTP session refused: max_sessions reached", "max_sessions", limit)
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
	modernRequest                         // a 2026-07-28 request (modernhttp.go)
)

// readFirstRequest reads a POST body once, bounded by max_request_bytes,
// and puts the same bytes back for the SDK. Only an initialize request
// gets a session built (its server, its tool list, the manifest). ok is
// false after an answer was written (413 for a body over the limit, 400
// for one that cannot be read).
func (h *Hub) readFirstRequest(w http.ResponseWriter, r *http.Request) (kind firstRequest, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxRequestBytes()))
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
func (h *Hub) newHTTPSession(w http.ResponseWriter, r *http.Request) (s *Session) {
	defer safe.Recover(h.log, "new HTTP session", func(p error) {
		s = nil
		http.Error(w, h.redact.String(p.Error()), http.StatusInternalServerError)
	})
	p := PrincipalFrom(r.Context())
	ts, err := h.toolsetFor(p, r.PathValue("toolset"))
	if err != nil {
		http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
		return nil
	}
	s, err = h.NewSession(ts)
	if err != nil {
		http.Error(w, h.redact.String(err.Error()), http.StatusNotFound)
		return nil
	}
	if p == nil {
		p = anonymous // no auth configured
	}
	s.principal = p
	return s
}

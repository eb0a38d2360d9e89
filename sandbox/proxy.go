package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
)

// The proxy's limits, per sandboxed server.
const (
	// MaxProxyConns bounds the connections a server has open through its
	// proxy at once (tunnels included); more wait for one to end.
	MaxProxyConns = 64
	// MaxProxyHeaderBytes bounds a request's line and headers.
	MaxProxyHeaderBytes = 32 << 10
	// ProxyHeaderTimeout bounds reading a request's line and headers.
	ProxyHeaderTimeout = 10 * time.Second
	// ProxyDialTimeout bounds resolving and connecting to an allowed host.
	ProxyDialTimeout = 10 * time.Second
	// ProxyIdleTimeout ends a connection or tunnel through which nothing
	// has passed for this long.
	ProxyIdleTimeout = 5 * time.Minute
)

// proxy is one server's door to the network: an HTTP proxy that takes
// CONNECT (any protocol in a tunnel, HTTPS above all) and plain http://
// requests, to the hosts and ports of the server's sandbox.network only.
// It listens where only that server can reach it (a Unix socket mounted
// into its sandbox, on Linux).
type proxy struct {
	server string
	rules  []config.NetworkEntry
	log    *slog.Logger
	// resolve looks a host name up (net.DefaultResolver's).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	slots   chan struct{} // MaxProxyConns
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
}

func newProxy(server string, rules []config.NetworkEntry, log *slog.Logger) *proxy {
	return &proxy{
		server: server, rules: rules, log: log,
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		slots: make(chan struct{}, MaxProxyConns),
		conns: map[net.Conn]struct{}{},
	}
}

// serve accepts connections on ln until it is closed (by close).
func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.slots <- struct{}{}
		if !p.track(c, true) {
			c.Close()
			<-p.slots
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-p.slots }()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

// track adds or removes a connection; false once the proxy is closed.
func (p *proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// close ends every connection and waits for their goroutines.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// handle serves one client connection: one request, or one tunnel.
func (p *proxy) handle(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(ProxyHeaderTimeout))
	head := &headCap{r: c, left: MaxProxyHeaderBytes}
	br := bufio.NewReaderSize(head, 4<<10)
	req, err := http.ReadRequest(br)
	if err != nil {
		refuse(c, http.StatusBadRequest, "mcp-hub sandbox proxy: unreadable request (or headers over "+strconv.Itoa(MaxProxyHeaderBytes)+" bytes)")
		return
	}
	head.left = -1 // the headers are in: a body or a tunnel is not capped
	c.SetReadDeadline(time.Time{})
	host, port, err := target(req)
	if err != nil {
		refuse(c, http.StatusBadRequest, "mcp-hub sandbox proxy: "+err.Error())
		return
	}
	where := net.JoinHostPort(host, strconv.Itoa(port))
	if !p.allowed(host, port) {
		p.log.Warn("sandbox: refused a connection outside the server's sandbox.network", "server", p.server, "to", where)
		refuse(c, http.StatusForbidden, fmt.Sprintf("mcp-hub sandbox: server %s may not reach %s: it is not in the server's sandbox.network", p.server, where))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ProxyDialTimeout)
	up, err := p.dial(ctx, host, port)
	cancel()
	if err != nil {
		refuse(c, http.StatusBadGateway, fmt.Sprintf("mcp-hub sandbox proxy: %s: %v", where, err))
		return
	}
	defer up.Close()
	if !p.track(up, true) {
		return
	}
	defer p.track(up, false)
	// What the client sent after the request's headers is in br.
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
	} else {
		// One request per connection: the answer's end is the upstream's
		// close, which keeps the proxy from parsing answers at all.
		req.Header.Del("Proxy-Connection")
		req.Header.Del("Proxy-Authorization")
		req.Close = true
		req.RequestURI = ""
		req.Host = req.URL.Host // the Host header names the host allowed, no other
		if err := req.Write(up); err != nil {
			return
		}
	}
	relay(c, br, up)
}

// headCap reads at most left bytes from r while the request's line and
// headers are read; left < 0 lifts the cap.
type headCap struct {
	r    io.Reader
	left int
}

func (h *headCap) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(p)
	}
	if h.left == 0 {
		return 0, errors.New("request headers too large")
	}
	n, err := h.r.Read(p[:min(len(p), h.left)])
	h.left -= n
	return n, err
}

// target is where a request wants to go.
func target(req *http.Request) (host string, port int, err error) {
	hostport := req.Host
	defPort := 80
	if req.Method != http.MethodConnect {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			return "", 0, errors.New("only CONNECT and absolute http:// requests are proxied (https goes through CONNECT)")
		}
		hostport = req.URL.Host
	} else {
		defPort = 443
	}
	h, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		h, ps = hostport, strconv.Itoa(defPort)
	}
	port, err = strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", hostport)
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "" {
		return "", 0, errors.New("no host")
	}
	return h, port, nil
}

// allowed reports whether a rule lets the server reach host:port. A rule
// without a port means the web's two, 80 and 443; a wildcard matches
// subdomains, not the domain itself.
func (p *proxy) allowed(host string, port int) bool {
	for _, r := range p.rules {
		hostOK := host == r.Host
		if r.Wildcard {
			hostOK = strings.HasSuffix(host, "."+r.Host)
		}
		portOK := port == r.Port || r.Port == 0 && (port == 80 || port == 443)
		if hostOK && portOK {
			return true
		}
	}
	return false
}

// dial connects to an allowed host. A host allowed by name must not
// resolve to this machine or to link-local addresses (cloud metadata):
// a name is no way around the loopback ports the server was not given.
// Loopback is reached only by an entry naming it (127.0.0.1:PORT,
// localhost:PORT). The address checked is the address dialled.
func (p *proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if host == "localhost" {
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	} else {
		found, err := p.resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, a := range found {
			a = a.Unmap()
			if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() {
				continue
			}
			addrs = append(addrs, a)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s resolves to no address a sandboxed server may reach (loopback and link-local need an entry naming them)", host)
		}
	}
	var d net.Dialer
	var err error
	for _, a := range addrs {
		var c net.Conn
		c, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
	}
	return nil, err
}

// relay copies both ways until either side ends, then closes both: a
// client gone, or a far side done answering, frees the connection's slot
// at once (no half-closed tunnels held open). Nothing passing for
// ProxyIdleTimeout ends it too.
func relay(c net.Conn, from io.Reader, up net.Conn) {
	idle := time.AfterFunc(ProxyIdleTimeout, func() { c.Close(); up.Close() })
	defer idle.Stop()
	copyHalf := func(dst net.Conn, src io.Reader, done chan<- struct{}) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				idle.Reset(ProxyIdleTimeout)
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	done := make(chan struct{}, 2)
	go copyHalf(up, from, done)
	go copyHalf(c, up, done)
	<-done
	c.Close()
	up.Close()
	<-done
}

// refuse answers a request the proxy will not carry.
func refuse(c net.Conn, code int, msg string) {
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(msg)+1, msg+"\n")
}

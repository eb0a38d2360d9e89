package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
)

func rules(t *testing.T, entries ...string) []config.NetworkEntry {
	t.Helper()
	var out []config.NetworkEntry
	for _, e := range entries {
		r, err := config.ParseNetworkEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestProxyAllowed(t *testing.T) {
	p := newProxy("s", rules(t, "api.github.com", "127.0.0.1:8080", "*.googleapis.com", "*.corp.example:8443", "[::1]:9000"), slog.Default())
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"api.github.com", 443, true},
		{"api.github.com", 80, true},
		{"api.github.com", 22, false}, // a host means the web's ports only
		{"github.com", 443, false},
		{"evil.api.github.com", 443, false},
		{"127.0.0.1", 8080, true},
		{"127.0.0.1", 8081, false}, // srt's gap: another port of an allowed host
		{"127.0.0.1", 443, false},
		{"localhost", 8080, false}, // names are not addresses
		{"storage.googleapis.com", 443, true},
		{"a.b.googleapis.com", 80, true},
		{"googleapis.com", 443, false}, // a wildcard is for subdomains
		{"evilgoogleapis.com", 443, false},
		{"x.corp.example", 8443, true},
		{"x.corp.example", 443, false},
		{"::1", 9000, true},
	} {
		if got := p.allowed(c.host, c.port); got != c.want {
			t.Errorf("allowed(%s, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
}

// TestProxyRefusesNamesOnLoopback: an allowed name that resolves to the
// loopback (or link-local: cloud metadata) is not a way to a port the
// server was not given.
func TestProxyRefusesNamesOnLoopback(t *testing.T) {
	p := newProxy("s", rules(t, "rebind.example:8080"), slog.Default())
	p.resolve = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254")}, nil
	}
	_, err := p.dial(context.Background(), "rebind.example", 8080)
	if err == nil || !strings.Contains(err.Error(), "no address a sandboxed server may reach") {
		t.Fatalf("dial = %v, want a refusal", err)
	}
}

// TestProxyServes runs the proxy on a real listener against a real HTTP
// server: a plain request and a CONNECT tunnel to the allowed port work,
// another port is refused with 403, an oversized header with 400.
func TestProxyServes(t *testing.T) {
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "hello %s %d", r.URL.Path, len(b))
			return
		}
		fmt.Fprint(w, "hello "+r.URL.Path)
	})}
	go srv.Serve(backend)
	defer srv.Close()
	port := backend.Addr().(*net.TCPAddr).Port

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy("s", rules(t, fmt.Sprintf("127.0.0.1:%d", port)), slog.Default())
	go p.serve(ln)
	defer func() { ln.Close(); p.close() }()

	roundTrip := func(raw string) string {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, raw)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	if got := roundTrip(fmt.Sprintf("GET http://127.0.0.1:%d/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port)); !strings.Contains(got, "200 OK") || !strings.Contains(got, "hello /x") {
		t.Errorf("plain GET: %q", got)
	}
	big := strings.Repeat("b", 3*MaxProxyHeaderBytes) // a body is not capped like headers
	if got := roundTrip(fmt.Sprintf("POST http://127.0.0.1:%d/post HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n%s", port, len(big), big)); !strings.Contains(got, fmt.Sprintf("hello /post %d", len(big))) {
		t.Errorf("POST with a large body: %.200q", got)
	}
	if got := roundTrip(fmt.Sprintf("GET http://127.0.0.1:%d/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port+1)); !strings.Contains(got, "403") {
		t.Errorf("GET another port: %q, want 403", got)
	}
	if got := roundTrip("GET http://127.0.0.1:1/ HTTP/1.1\r\nX: " + strings.Repeat("a", MaxProxyHeaderBytes) + "\r\n\r\n"); !strings.Contains(got, "400") {
		t.Errorf("oversized header: %q, want 400", got)
	}

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port, port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(inner.Body)
	if string(body) != "hello /tunnel" {
		t.Errorf("through the tunnel: %q", body)
	}
}

// TestProxyBoundsConnections: past MaxProxyConns open tunnels, the next
// connection waits (it is not served, nor dropped) until one ends.
func TestProxyBoundsConnections(t *testing.T) {
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	go func() { // accept and hold: every tunnel stays open
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	port := backend.Addr().(*net.TCPAddr).Port
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy("s", rules(t, fmt.Sprintf("127.0.0.1:%d", port)), slog.Default())
	go p.serve(ln)
	defer func() { ln.Close(); p.close() }()

	tunnel := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n", port)
		return c, bufio.NewReader(c)
	}
	var open []net.Conn
	for range MaxProxyConns {
		c, br := tunnel()
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("tunnel %d: %v %v", len(open), resp, err)
		}
		open = append(open, c)
	}
	extra, br := tunnel()
	defer extra.Close()
	// A negative check needs a bound: 300 ms without an answer.
	extra.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.Peek(1); err == nil {
		t.Fatalf("connection %d was served while %d were open", MaxProxyConns+1, MaxProxyConns)
	}
	open[0].Close()
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("once one ended, the waiting connection: %v %v", resp, err)
	}
	for _, c := range open[1:] {
		c.Close()
	}
}

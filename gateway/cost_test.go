package gateway

import (
	"io"
	"math"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestCallAllocations bounds what the hub process allocates to forward one
// tools/call from a streamable HTTP client to a stdio server: allocation and
// the garbage collection it causes were a third of a go-sdk proxy's CPU.
// Stock go-sdk v1.8.0 alone allocates a 32 KiB decoder buffer for each of
// the six decodes of an inbound request, about 200 KiB a call; our patched
// copy, which every build uses, does not (third_party/README.md). Counting
// bytes, not timing, makes this repeatable; the HTTP client's side is in the
// count too.
func TestCallAllocations(t *testing.T) {
	const limit = 64 << 10
	url, hdr := secRawSession(t, fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "echo")))
	call := func() {
		resp := fixture.Post(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"hello"}}}`, hdr)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `fx:echo:{\"text\":\"hello\"}`) {
			t.Fatalf("tools/call: %s %s", resp.Status, body)
		}
	}
	for range 20 { // connections, caches and pools warm up
		call()
	}

	// TotalAlloc counts the whole process: what earlier tests left running
	// (a child being reaped, a hub closing) lands in a round too, the more
	// so on a loaded machine. That noise only adds, so the least of a few
	// rounds is the call's own cost.
	const calls, rounds = 100, 5
	perCall := uint64(math.MaxUint64)
	for range rounds {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range calls {
			call()
		}
		runtime.ReadMemStats(&after)
		perCall = min(perCall, (after.TotalAlloc-before.TotalAlloc)/calls)
	}
	t.Logf("%d bytes allocated per call (least of %d rounds)", perCall, rounds)
	if perCall > limit {
		t.Errorf("forwarding one tools/call allocated %d bytes, over the limit of %d: profile it with go test -memprofile (does third_party/go-sdk still carry go-sdk.patch?)", perCall, limit)
	}
}

// BenchmarkCall forwards tools/call from a streamable HTTP client through
// the real gateway to a real stdio server, in process, for allocs/op and
// B/op (the HTTP client's side counts too; it is the same before and after
// a change):
//
//	go test -run '^$' -bench '^BenchmarkCall$' -benchmem -count 5 ./gateway
func BenchmarkCall(b *testing.B) {
	url, hdr := secRawSession(b, fixture.RestartingConfig(fixture.StdioEntry(b, "fx", "-tools", "echo")))
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"hello"}}}`
	client := &http.Client{}
	call := func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(out), `fx:echo:`) {
			b.Fatalf("tools/call: %s %s", resp.Status, out)
		}
	}
	for range 50 {
		call()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		call()
	}
}

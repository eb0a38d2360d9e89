package hub

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCallAllocations bounds what the hub process allocates to forward one
// tools/call from a streamable HTTP client to a stdio server: allocation and
// the garbage collection it causes were a third of a go-sdk proxy's CPU.
// Stock go-sdk v1.8.0 alone allocates a 32 KiB decoder buffer for each of
// the six decodes of an inbound request, about 200 KiB a call; our patched
// copy does not (third_party/README.md). Counting bytes, not timing, makes
// this repeatable; the HTTP client's side is in the count too.
//
// The bound holds for the fast build (go test -modfile=go.fast.mod), which
// scripts/test.sh runs with MCP_HUB_FAST_BUILD=1; under the stock build
// (plain go.mod, what go install gives) the test is skipped, unless that
// variable says it must not be.
func TestCallAllocations(t *testing.T) {
	if perDecode := sdkDecodeBytes(); perDecode >= 32<<10 {
		if os.Getenv("MCP_HUB_FAST_BUILD") == "1" {
			t.Fatalf("MCP_HUB_FAST_BUILD=1 but go-sdk allocates %d bytes to decode a small message: this is stock go-sdk; build with -modfile=go.fast.mod", perDecode)
		}
		t.Skipf("stock go-sdk (%d bytes per decoded message): the bound holds for the fast build, go test -modfile=go.fast.mod ./hub/", perDecode)
	}
	const limit = 64 << 10
	url, hdr := secRawSession(t, secConfig(secStdio(t, "fx", "-tools", "echo")))
	call := func() {
		resp := secPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"hello"}}}`, hdr)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `fx:echo:{\"text\":\"hello\"}`) {
			t.Fatalf("tools/call: %s %s", resp.Status, body)
		}
	}
	for range 20 { // connections, caches and pools warm up
		call()
	}

	const calls = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		call()
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / calls
	t.Logf("%d bytes allocated per call", perCall)
	if perCall > limit {
		t.Errorf("forwarding one tools/call allocated %d bytes, over the limit of %d: profile it with go test -memprofile (is go.fast.mod's replace of go-sdk still in effect?)", perCall, limit)
	}
}

// sdkDecodeBytes is what go-sdk allocates to decode one small JSON-RPC
// message: over 32 KiB with stock go-sdk v1.8.0, a few hundred bytes with
// the patched copy of the fast build.
func sdkDecodeBytes() uint64 {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	const n = 16
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := jsonrpc.DecodeMessage(msg); err != nil {
			panic(err)
		}
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / n
}

package hub

import (
	"context"
	"io"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// BenchmarkStdioCall forwards tools/call from a client over stdio (pipes
// into Hub.ServeStdio, as `mcp-hub serve` is run) to a real stdio server,
// in process, for allocs/op and B/op, in each protocol era the client can
// take (go-sdk's client takes 2026-07-28 when it is offered, as it is by
// default); the client's side (go-sdk's typed client) is in the count too:
//
//	go test -run '^$' -bench '^BenchmarkStdioCall$' -benchmem -count 5 ./hub
func BenchmarkStdioCall(b *testing.B) {
	for _, era := range []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{{"2025-11-25", fixture.Legacy()}, {"2026-07-28", nil}} {
		b.Run("era="+era.name, func(b *testing.B) { benchStdioCall(b, era.opts) })
	}
}

func benchStdioCall(b *testing.B, opts *mcp.ClientSessionOptions) {
	h, _ := secHub(b, fixture.RestartingConfig(fixture.StdioEntry(b, "fx", "-tools", "echo")))
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	clientIn, hubOut := io.Pipe()
	hubIn, clientOut := io.Pipe()
	go h.ServeStdio(ctx, "", hubIn, hubOut)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "hello"}}
	call := func() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError || len(res.Content) == 0 {
			b.Fatalf("tools/call: %v %+v", err, res)
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

package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// TestToolListCursorsAsSDK: the hub answers tools/list itself, with
// go-sdk's page size and cursors of go-sdk's form (gob type ids differ
// between processes, so not byte for byte): the hub reads the SDK's cursor,
// and its own cursors read back.
func TestToolListCursorsAsSDK(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "0"}, nil)
	for i := range mcp.DefaultPageSize + 5 {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%04d", i), InputSchema: json.RawMessage(`{"type":"object"}`)}, answeredByRoute)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	page, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := page.Tools[len(page.Tools)-1].Name
	tests := []struct {
		name, cursor string
		want         string
	}{
		{"the SDK's cursor after a full page", page.NextCursor, last},
	}
	for _, tc := range tests {
		if len(page.Tools) != mcp.DefaultPageSize {
			t.Errorf("%s: the SDK's page has %d tools, want %d", tc.name, len(page.Tools), mcp.DefaultPageSize)
		}
		own, err := encodeCursor(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if name, err := decodeCursor(own); err != nil || name != tc.want {
			t.Errorf("%s: the hub's own cursor reads back as %q, %v; want %q", tc.name, name, err, tc.want)
		}
		if name, err := decodeCursor(tc.cursor); err != nil || name != tc.want {
			t.Errorf("%s: decodeCursor = %q, %v; want %q", tc.name, name, err, tc.want)
		}
	}
	if _, err := decodeCursor("not-a-cursor"); err == nil {
		t.Error("decodeCursor accepted garbage")
	}
}

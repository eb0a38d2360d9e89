package hub

// The real builtin servers (package builtin) behind a hub: what one session
// sends a builtin fails that call at most, never the hub, the other
// sessions or the connection to the builtin (issue 11).

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestBuiltinsContained runs issue 11's reports against the real builtins:
// the slugify arguments that panicked, the time difference that pinned a
// CPU, a text__encode result larger than the in-memory transport's frame
// limit, and a request of a few MiB. Each
// call gets an answer (a result or an isError naming the limit); after each,
// another session's calls to the same servers work, and no builtin was
// restarted.
func TestBuiltinsContained(t *testing.T) {
	t.Parallel()
	cfg := fixture.NewConfig(config.Discovery{},
		&config.Server{Upstream: config.Upstream{Name: "text", Builtin: "text"}},
		&config.Server{Upstream: config.Upstream{Name: "time", Builtin: "time"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Logger: quietLogger, StartupWait: 20 * time.Second, Builtin: builtins(cfg, quietLogger)}) // the real builtins
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	a, other := connectClient(t, h, ""), connectClient(t, h, "")

	htmlHeavy := strings.Repeat(`<a href="x">&</a>`, 3<<20/17) // 3 MiB
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"slugify that panicked", "text__slugify", map[string]any{"text": "a b", "separator": "--", "max_length": 3}, false, "a"},
		{"time difference that pinned a CPU", "time__time_difference", map[string]any{"start": "-9223372036854775808", "end": "9223372036854775807"}, true, "outside the years 1 to 9999"},
		{"result over the frame limit", "text__encode", map[string]any{"text": htmlHeavy, "encoding": "html"}, true, "over the 4 MiB limit of text results"},
		// 4000 KiB of "&#34;", which JSON escapes to twice that, twice over
		// (text and structured content): 15.6 MiB.
		{"encoded result over max_result_bytes", "text__encode", map[string]any{"text": strings.Repeat(`"`, 800<<10), "encoding": "html"}, true, "over the 8 MiB limit on one result (max_result_bytes)"},
		{"a multi-MiB request", "text__hash", map[string]any{"text": strings.Repeat("<", 3<<20)}, false, "sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Multi-MiB arguments under -race on a loaded machine take
			// seconds of CPU: the bound is generous, the answer is checked.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("tools/call %s: %v", tc.tool, err)
			}
			text := fixture.ResultText(res)
			if res.IsError != tc.isError || !strings.Contains(text, tc.want) && !strings.Contains(fixture.JSON(t, res.StructuredContent), tc.want) {
				t.Errorf("%s: isError=%v %.300q; want isError=%v with %q", tc.tool, res.IsError, text, tc.isError, tc.want)
			}
			for tool, args := range map[string]map[string]any{"text__hash": {"text": "x"}, "time__current_time": {}} {
				if res := other.call(tool, args); res.IsError {
					t.Errorf("another session's %s after %s: %s", tool, tc.tool, fixture.ResultText(res))
				}
			}
			for _, st := range h.Upstreams() {
				if st.Restarts != 0 || st.State != upstream.StateReady {
					t.Errorf("after %s: server %s is %s with %d restarts (%s)", tc.tool, st.Name, st.State, st.Restarts, st.LastError)
				}
			}
		})
	}
}

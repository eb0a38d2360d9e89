package hub

// Tests of listchanged.go: the relist_wait setting. The wire-order tests of
// toolsNotice read the raw bytes of both fronts, stdout and the gateway's
// SSE streams: gateway/listchanged_test.go.

import (
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
)

// TestRelistWaitConfig: discovery.relist_wait defaults to
// DefaultRelistWait; 0 turns the wait off.
func TestRelistWaitConfig(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want time.Duration
	}{
		{"", config.DefaultRelistWait},
		{"discovery:\n  relist_wait: 0\n", 0},
		{"discovery:\n  relist_wait: 250ms\n", 250 * time.Millisecond},
	} {
		cfg, err := config.Parse("hub.yaml", []byte("servers:\n  a:\n    command: x\n"+tc.doc), builtin.Names())
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if got := cfg.Discovery.RelistWaitOrDefault(); got != tc.want {
			t.Errorf("%q: relist_wait %s, want %s", tc.doc, got, tc.want)
		}
	}
}

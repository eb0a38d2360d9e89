package hub

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// TestManifestCompactPastBudget: with hundreds of deferred servers the
// manifest keeps one line per server (count and summary) and drops the
// tool names, so deferring still saves tokens.
func TestManifestCompactPastBudget(t *testing.T) {
	tests := []struct {
		servers   int
		wantNames bool
	}{
		{servers: 5, wantNames: true},
		{servers: 400, wantNames: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.servers), func(t *testing.T) {
			h := &Hub{}
			h.live.Store(&live{cfg: &config.Config{Servers: map[string]*config.Server{}}})
			c := &Catalog{}
			for i := range tt.servers {
				server := fmt.Sprintf("server%03d", i)
				for j := range 3 {
					c.Tools = append(c.Tools, &Tool{
						Name: fmt.Sprintf("%s__tool_%d", server, j), Server: server, Deferred: true,
						Def: &mcp.Tool{Description: fmt.Sprintf("Does task %d of server %d.", j, i)},
					})
				}
			}
			m := h.manifest(c, nil)
			if got := strings.Count(m, "- server"); got != tt.servers {
				t.Errorf("%d server entries, want %d", got, tt.servers)
			}
			if got := strings.Contains(m, "server000__tool_0"); got != tt.wantNames {
				t.Errorf("manifest lists tool names: %v, want %v", got, tt.wantNames)
			}
			if !tt.wantNames {
				if !strings.Contains(m, "- server000 (3 tools): Does task 0 of server 0.") {
					t.Errorf("compact line missing:\n%s", m[:200])
				}
				if len(m) > 2*manifestBudget {
					t.Errorf("compact manifest is %d characters", len(m))
				}
			}
		})
	}
}

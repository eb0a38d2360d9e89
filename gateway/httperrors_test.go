package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestHTTPRefusalsAreJSONRPC: requests the SDK refuses before the hub sees
// them get JSON-RPC error bodies (with the request's id when readable), keep
// their status, and are logged once.
func TestHTTPRefusalsAreJSONRPC(t *testing.T) {
	h, lg := secHub(t, fixture.RestartingConfig(fixture.StdioEntry(t, "good", "-tools", "a")))
	srv := httptest.NewServer(h.HTTPHandler(nil))
	defer srv.Close()
	tests := []struct {
		name, body, session string
		status              int
		code                int64
		id                  string
	}{
		{"not JSON", `{not json`, "", 400, -32700, "null"},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"bogus/method"}`, "", 400, -32601, "7"},
		{"unknown session", `{"jsonrpc":"2.0","id":"x","method":"tools/list"}`, "nope", 404, -32001, "null"}, // the SDK refuses it before reading the body,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.session != "" {
				req.Header.Set("Mcp-Session-Id", tt.session)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if resp.StatusCode != tt.status || got.JSONRPC != "2.0" || got.Error.Code != tt.code || string(got.ID) != tt.id || got.Error.Message == "" {
				t.Errorf("status %d, body %+v (id %s); want status %d, code %d, id %s", resp.StatusCode, got, got.ID, tt.status, tt.code, tt.id)
			}
		})
	}
	if n := strings.Count(lg.String(), "client request refused"); n != len(tests) {
		t.Errorf("logged %d refusals, want %d:\n%s", n, len(tests), lg.String())
	}
}

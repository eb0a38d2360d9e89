package chatloop

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestProviderErrors checks that each failure is one line naming the
// provider, the model and the fix, for both wire formats.
func TestProviderErrors(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{"bad key", 401, `{"error":{"message":"Incorrect API key provided","type":"authentication_error"}}`, []string{"API key was rejected (HTTP 401", "providers.local.api_key"}},
		{"unknown model", 404, `{"error":{"message":"model 'nope' not found","type":"not_found_error","code":"model_not_found"}}`, []string{"does not know this model", "ollama pull test-model"}},
		{"context length", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`, []string{"context window", "/reset"}},
		{"server error after retries", 500, `{"error":{"message":"upstream overloaded","type":"api_error"}}`, []string{"server error (HTTP 500, still failing after retries", "try again later"}},
		{"rate limited after retries", 429, `{"error":{"message":"quota exceeded","type":"rate_limit_error"}}`, []string{"rate limited", "HTTP 429"}},
	}
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				h := newTestHub(t)
				// Enough steps for the SDK's two retries on 429/5xx.
				st := step{status: tc.status, raw: tc.body, header: map[string]string{"Retry-After-Ms": "1"}}
				p := newScripted(t, kind, st, st, st)
				r := runTurn(t, h, p, false, nil, "hi")
				var pe *ProviderError
				if !errors.As(r.err, &pe) {
					t.Fatalf("err = %v (%T), want ProviderError", r.err, r.err)
				}
				msg := r.err.Error()
				for _, w := range append([]string{"provider local, model test-model: "}, tc.want...) {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q lacks %q", msg, w)
					}
				}
				if strings.Contains(msg, "\n") || strings.Contains(msg, "test-key") {
					t.Errorf("error is not one clean line: %q", msg)
				}
				eq(t, "status", pe.Status, tc.status)
			})
		}
	}
}

func TestProviderUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			cfg := &Config{
				Providers: map[string]config.Provider{"local": {Type: kind, BaseURL: "http://" + addr + "/v1", APIKey: "k"}},
				Models:    map[string]config.Model{"m": {Provider: "local", Model: "test-model"}},
				Chat:      config.Chat{MaxRounds: 5},
			}
			prov, err := cfg.NewProvider("local")
			if err != nil {
				t.Fatal(err)
			}
			_, err = prov.Complete(context.Background(), &Request{Model: "test-model", Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
			if err == nil || !strings.Contains(err.Error(), "provider local, model test-model: cannot reach http://"+addr) || !strings.Contains(err.Error(), "base_url") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestProviderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := newScripted(t, config.ProviderOpenAI, reply("never"))
	cfg := testConfig(p)
	prov, _ := cfg.NewProvider("local")
	_, err := prov.Complete(ctx, &Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

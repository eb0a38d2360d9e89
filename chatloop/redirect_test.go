package chatloop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestProviderRedirectToAnotherOrigin: a provider whose base_url answers
// with a redirect to another origin (here another port of 127.0.0.1)
// does not get it followed: the model call fails saying so, and the
// other origin receives nothing, so neither the API key (Anthropic's
// X-Api-Key, which net/http copies along; OpenAI's Authorization, which
// it copies to the same host name) nor the conversation reaches it.
func TestProviderRedirectToAnotherOrigin(t *testing.T) {
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newTestHub(t)
			elsewhere := newScripted(t, kind, reply("answered from elsewhere"))
			redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.server.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(redirector.Close)

			cfg := testConfig(elsewhere)
			pc := cfg.Providers["local"]
			pc.BaseURL = strings.Replace(pc.BaseURL, elsewhere.server.URL, redirector.URL, 1)
			pc.APIKey = "sk-redirect-secret"
			cfg.Providers["local"] = pc
			chat, err := cfg.NewChat(h.dial(t), ChatOptions{Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			answer, err := chat.Send(context.Background(), "hello")
			if err == nil || !strings.Contains(err.Error(), "refused a redirect to another origin") {
				t.Fatalf("Send = %q, %v; want the redirect refused", answer, err)
			}
			if strings.Contains(err.Error(), "sk-redirect-secret") {
				t.Errorf("the error shows the key: %v", err)
			}
			if n := len(elsewhere.requests()); n != 0 {
				t.Errorf("the other origin got %d requests", n)
			}
		})
	}
}

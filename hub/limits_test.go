package hub

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// timedInit POSTs an initialize with the bearer token and returns the
// status and how long the answer took. It is safe in goroutines: a failed
// request is status 0.
func timedInit(url, token string) (int, time.Duration) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(secInit))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, time.Since(start)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// TestOAuthHangingIssuer: an issuer that takes requests and never answers
// holds no request longer than keyFetchTimeout; requests share one fetch
// rather than queue for fetches of their own; a token that is not a
// well-formed JWT fetches nothing; cached keys keep working while a
// refresh hangs.
func TestOAuthHangingIssuer(t *testing.T) {
	t.Parallel()
	bound := keyFetchTimeout + 2*time.Second

	t.Run("no keys yet", func(t *testing.T) {
		t.Parallel()
		hang, accepted := fixture.HangingListener(t)
		minter := fixture.NewIssuer(t, "", false)
		minter.AddKey("k1", false, true)
		cfg := gwConfig()
		cfg.Auth.OAuth = &OAuth{Issuer: hang, Audience: testAudience}
		_, url, _ := gwHub(t, cfg, &gwUpstream{})
		url += "/mcp"
		signed := minter.Token("k1", testAudience, jwt.MapClaims{"iss": hang})

		for range 3 {
			if status, took := timedInit(url, "a.b.c"); status != http.StatusUnauthorized || took > time.Second {
				t.Errorf("a.b.c: %d after %s, want 401 at once", status, took)
			}
		}
		if n := accepted.Load(); n != 0 {
			t.Errorf("tokens that are not JWTs made the hub contact the issuer %d times", n)
		}

		// Five at once wait for one shared fetch.
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				if status, took := timedInit(url, signed); status != http.StatusServiceUnavailable || took > bound {
					t.Errorf("concurrent request %d: %d after %s, want 503 within %s", i+1, status, took, bound)
				}
			})
		}
		wg.Wait()
		// Five more, one after another, do not add up.
		start := time.Now()
		for i := range 5 {
			if status, took := timedInit(url, signed); status != http.StatusServiceUnavailable || took > bound {
				t.Errorf("sequential request %d: %d after %s, want 503 within %s", i+1, status, took, bound)
			}
		}
		if took := time.Since(start); took > bound {
			t.Errorf("five sequential requests took %s together, want within %s", took, bound)
		}
		if n := accepted.Load(); n > 1 {
			t.Errorf("the issuer was contacted %d times, want one fetch shared by all", n)
		}
	})

	t.Run("keys cached", func(t *testing.T) {
		t.Parallel()
		iss := fixture.NewIssuer(t, "", false)
		iss.AddKey("k1", false, true)
		iss.AddKey("stranger", false, false)
		_, url, _ := gwHub(t, oauthConfig(iss), &gwUpstream{})
		url += "/mcp"
		good := iss.Token("k1", testAudience, nil)
		unknown := iss.Token("stranger", testAudience, nil)
		if status, _ := timedInit(url, good); status != http.StatusOK {
			t.Fatalf("good token: %d", status)
		}

		iss.Hang()
		type answer struct {
			status int
			took   time.Duration
		}
		refetch := make(chan answer, 1)
		go func() {
			status, took := timedInit(url, unknown)
			refetch <- answer{status, took}
		}()
		fixture.Eventually(t, bound, "the refetch for an unknown kid to reach the issuer", func() bool { return iss.Held.Load() > 0 })
		if status, took := timedInit(url, good); status != http.StatusOK {
			t.Errorf("good token while a refresh hangs: %d after %s, want 200", status, took)
		}
		select {
		case a := <-refetch:
			t.Errorf("the good token waited for the hanging refresh (which ended with %d after %s)", a.status, a.took)
		default:
		}
		if a := <-refetch; a.status != http.StatusUnauthorized || a.took > bound {
			t.Errorf("unknown kid while the issuer hangs: %d after %s, want 401 within %s", a.status, a.took, bound)
		}

		held := iss.Held.Load()
		for i := range 5 {
			if status, took := timedInit(url, unknown); status != http.StatusUnauthorized || took > time.Second {
				t.Errorf("unknown kid %d right after a refetch: %d after %s, want 401 at once", i+1, status, took)
			}
		}
		if got := iss.Held.Load(); got != held {
			t.Errorf("unknown kids made %d more fetches within unknownKIDEvery, want 0", got-held)
		}
	})
}

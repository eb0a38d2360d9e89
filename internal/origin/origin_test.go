package origin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b string }{
		{"https://Example.com/x", "https://example.com:443/y"},
		{"http://example.com", "http://example.com:80"},
		{"http://[::1]:8080/v1", "http://[::1]:8080"},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if Of(a) != Of(b) {
			t.Errorf("Of(%s) = %s, Of(%s) = %s: want one origin", tc.a, Of(a), tc.b, Of(b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"https://example.com", "http://example.com"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081"},
		{"https://example.com", "https://api.example.com"},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if Of(a) == Of(b) {
			t.Errorf("%s and %s: want two origins", tc.a, tc.b)
		}
	}
}

// TestCheckRedirect: a redirect within the origin is followed; one to
// another port of the same host is refused and nothing reaches it.
func TestCheckRedirect(t *testing.T) {
	t.Parallel()
	reached := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.Header.Get("X-Api-Key")
	}))
	defer other.Close()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, srv.URL+"/there", http.StatusTemporaryRedirect)
		case "/there":
			w.Write([]byte("ok"))
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	c := &http.Client{CheckRedirect: CheckRedirect}

	res, err := c.Get(srv.URL + "/here")
	if err != nil || res.Request.URL.Path != "/there" {
		t.Fatalf("same-origin redirect: %v", err)
	}
	res.Body.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/away", nil)
	req.Header.Set("X-Api-Key", "sk-secret")
	res, err = c.Do(req)
	if res != nil {
		res.Body.Close()
	}
	var re *RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("cross-origin redirect: err = %v; want a *RedirectError", err)
	}
	select {
	case key := <-reached:
		t.Fatalf("the other origin was asked (X-Api-Key %q)", key)
	default:
	}
}

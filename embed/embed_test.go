package embed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/embed"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"gopkg.in/yaml.v3"
)

// endpoints are the two wire formats, pointed at one fixture server.
func endpoints(srv *fixture.EmbeddingsServer) []config.Embeddings {
	return []config.Embeddings{
		{Provider: config.EmbeddingsOllama, Model: "nomic-embed-text", BaseURL: srv.URL},
		{Provider: config.EmbeddingsOpenAI, Model: "text-embedding-3-small", BaseURL: srv.URL + "/v1"},
	}
}

func TestEmbedBothWireFormats(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, map[string]string{"remember": "memory", "store": "memory"})
	for _, cfg := range endpoints(srv) {
		t.Run(cfg.Provider, func(t *testing.T) {
			c, err := embed.New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			// More texts than one batch: the answer keeps their order.
			texts := make([]string, embed.BatchSize+3)
			for i := range texts {
				texts[i] = fmt.Sprintf("text number w%d", i)
			}
			texts[0], texts[1], texts[2] = "remember this fact", "store in memory", "weather forecast"
			before, _ := srv.Requests()
			vecs, err := c.Embed(t.Context(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := srv.Requests(); after-before != 2 {
				t.Errorf("%d requests for %d texts, want 2 batches", after-before, len(texts))
			}
			if len(vecs) != len(texts) {
				t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
			}
			for i, v := range vecs {
				if n := embed.Dot(v, v); n < 0.999 || n > 1.001 {
					t.Fatalf("vector %d has squared norm %v, want unit length", i, n)
				}
			}
			if near, far := embed.Dot(vecs[0], vecs[1]), embed.Dot(vecs[0], vecs[2]); near <= far {
				t.Errorf("cos(remember, store) = %v not above cos(remember, weather) = %v", near, far)
			}
			last, err := c.EmbedQuery(t.Context(), texts[len(texts)-1])
			if err != nil {
				t.Fatal(err)
			}
			if d := embed.Dot(last, vecs[len(vecs)-1]); d < 0.999 {
				t.Errorf("the last text's vector moved: cos %v (batch order lost?)", d)
			}
		})
	}
}

func TestConfigNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     config.Embeddings
		wantURL string
		wantErr string
	}{
		{"ollama default", config.Embeddings{Provider: "Ollama", Model: "m"}, config.DefaultOllamaBaseURL, ""},
		{"ollama /v1 base", config.Embeddings{Provider: "ollama", Model: "m", BaseURL: "http://h:11434/v1/"}, "http://h:11434", ""},
		{"openai default with key", config.Embeddings{Provider: "openai", Model: "m", APIKey: "k"}, config.DefaultOpenAIBaseURL, ""},
		{"openai local without key", config.Embeddings{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:8000/v1"}, "http://127.0.0.1:8000/v1", ""},
		{"openai default without key", config.Embeddings{Provider: "openai", Model: "m"}, "", "needs api_key"},
		{"no provider", config.Embeddings{Model: "m"}, "", "missing provider"},
		{"unknown provider", config.Embeddings{Provider: "cohere", Model: "m"}, "", "unknown provider"},
		{"no model", config.Embeddings{Provider: "ollama"}, "", "missing model"},
		{"bad url", config.Embeddings{Provider: "ollama", Model: "m", BaseURL: "ftp://x"}, "", "not an http(s) URL"},
		{"credentials in url", config.Embeddings{Provider: "ollama", Model: "m", BaseURL: "http://u:p@h"}, "", "must not hold credentials"},
		{"negative timeout", config.Embeddings{Provider: "ollama", Model: "m", Timeout: -1}, "", "positive"},
		{"huge timeout", config.Embeddings{Provider: "ollama", Model: "m", Timeout: config.Duration(time.Hour)}, "", "above the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.Normalize()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.BaseURL != tt.wantURL {
				t.Errorf("base_url = %q, want %q", got.BaseURL, tt.wantURL)
			}
			if time.Duration(got.Timeout) != config.DefaultEmbeddingsTimeout {
				t.Errorf("timeout = %v, want the default", got.Timeout)
			}
		})
	}
}

func TestConfigYAML(t *testing.T) {
	t.Parallel()
	var cfg config.Embeddings
	src := "provider: openai\nmodel: text-embedding-3-small\nbase_url: http://127.0.0.1:8000/v1\napi_key: sk-x\ntimeout: 750ms\n"
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	want := config.Embeddings{Provider: "openai", Model: "text-embedding-3-small", BaseURL: "http://127.0.0.1:8000/v1", APIKey: "sk-x", Timeout: config.Duration(750 * time.Millisecond)}
	if cfg != want {
		t.Errorf("decoded %+v, want %+v", cfg, want)
	}
	if err := yaml.Unmarshal([]byte("timeout: soon\n"), &cfg); err == nil {
		t.Error("timeout: soon was accepted")
	}
}

func TestAPIKeyStaysWithItsOrigin(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdef0123456789"
	srv := fixture.StartEmbeddings(t, nil)
	srv.Key = key
	c, err := embed.New(config.Embeddings{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1", APIKey: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(t.Context(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastHeader().Get("Authorization"); got != "Bearer "+key {
		t.Errorf("Authorization = %q", got)
	}

	// A server that redirects to another origin does not get it followed.
	elsewhere := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere <- r.Header.Get("Authorization")
	}))
	t.Cleanup(other.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/embeddings", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	c, err = embed.New(config.Embeddings{Provider: "openai", Model: "m", BaseURL: redirector.URL + "/v1", APIKey: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(t.Context(), []string{"hello"})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want the redirect refused", err)
	}
	select {
	case h := <-elsewhere:
		t.Fatalf("the other origin was asked (Authorization %q)", h)
	default:
	}

	// An error echoing the key does not carry it.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error": {"message": "bad key %s"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	t.Cleanup(echo.Close)
	c, err = embed.New(config.Embeddings{Provider: "openai", Model: "m", BaseURL: echo.URL, APIKey: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(t.Context(), []string{"hello"})
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("err = %v, want HTTP 401 without the key", err)
	}
}

func TestEmbedFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		status  int
		wantErr string
	}{
		{"ollama error", `{"error": "model \"x\" not found, try pulling it first"}`, 404, `HTTP 404: model "x" not found`},
		{"openai error", `{"error": {"message": "The model does not exist", "type": "invalid_request_error"}}`, 404, "The model does not exist"},
		{"html error", `<html>bad gateway</html>`, 502, "HTTP 502"},
		{"too few vectors", `{"embeddings": []}`, 200, "0 vectors for 1 texts"},
		{"empty vector", `{"embeddings": [[]]}`, 200, "empty vector"},
		{"not json", `hello`, 200, "not Ollama's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			c, err := embed.New(config.Embeddings{Provider: "ollama", Model: "x", BaseURL: srv.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Embed(t.Context(), []string{"hello"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}

	t.Run("openai repeated index", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}`)
		}))
		t.Cleanup(srv.Close)
		c, _ := embed.New(config.Embeddings{Provider: "openai", Model: "x", BaseURL: srv.URL}, nil)
		if _, err := c.Embed(t.Context(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "repeated index") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("oversized answer", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"embeddings": [[`)
			chunk := strings.Repeat("0.125,", 1<<14)
			for range embed.MaxResponseBytes/len(chunk) + 1 {
				if _, err := fmt.Fprint(w, chunk); err != nil {
					return
				}
			}
		}))
		t.Cleanup(srv.Close)
		c, _ := embed.New(config.Embeddings{Provider: "ollama", Model: "x", BaseURL: srv.URL}, nil)
		if _, err := c.Embed(t.Context(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestEmbedQueryTimeout(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, nil)
	srv.Hold()
	c, err := embed.New(config.Embeddings{Provider: "ollama", Model: "m", BaseURL: srv.URL, Timeout: config.Duration(50 * time.Millisecond)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.EmbedQuery(t.Context(), "hello")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

func TestCache(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, nil)
	for _, cfg := range endpoints(srv) {
		t.Run(cfg.Provider, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c, err := embed.New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			texts := []string{"read a file", "send an email", "search the web"}
			cache, err := embed.OpenCache(dir, c.Model())
			if err != nil {
				t.Fatal(err)
			}
			first, missed, err := c.EmbedCached(t.Context(), cache, texts)
			if err != nil || missed != 3 {
				t.Fatalf("first: missed %d, err %v", missed, err)
			}
			if err := cache.Save(); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(cache.Path()); err != nil {
				t.Fatal(err)
			} else if st.Mode().Perm()&0o077 != 0 && os.PathSeparator == '/' {
				t.Errorf("cache file mode %v, want private", st.Mode().Perm())
			}

			// A restart reads the file: nothing is asked again.
			cache, err = embed.OpenCache(dir, c.Model())
			if err != nil {
				t.Fatal(err)
			}
			before, _ := srv.Requests()
			again, missed, err := c.EmbedCached(t.Context(), cache, texts)
			if err != nil || missed != 0 {
				t.Fatalf("after restart: missed %d, err %v", missed, err)
			}
			if after, _ := srv.Requests(); after != before {
				t.Errorf("%d requests on a full cache hit", after-before)
			}
			for i := range texts {
				if embed.Dot(first[i], again[i]) < 0.9999 {
					t.Errorf("cached vector %d differs", i)
				}
			}

			// One changed text is the only one asked for.
			texts[1] = "send a message"
			_, missed, err = c.EmbedCached(t.Context(), cache, texts)
			if err != nil || missed != 1 {
				t.Fatalf("after a change: missed %d, err %v", missed, err)
			}

			// Another model does not see these vectors.
			other, err := embed.OpenCache(dir, c.Model()+"-v2")
			if err != nil || other.Len() != 0 {
				t.Fatalf("another model's cache: %d vectors, err %v", other.Len(), err)
			}
		})
	}
}

func TestCacheDamagedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := embed.CachePath(dir, "m")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"garbage", "mcp-hub-embed-v1\x01\x00\x00\x00m\x04\x00\x00\x00\xff\xff\x00\x00"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cache, err := embed.OpenCache(dir, "m")
		if err == nil {
			t.Errorf("%q: no error", content)
		}
		if cache == nil || cache.Len() != 0 {
			t.Fatalf("%q: want an empty usable cache", content)
		}
		cache.Put("x", []float32{1, 0})
		if err := cache.Save(); err != nil {
			t.Fatal(err)
		}
		if cache, err = embed.OpenCache(dir, "m"); err != nil || cache.Len() != 1 {
			t.Fatalf("rewritten cache: %d vectors, err %v", cache.Len(), err)
		}
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b []float32
		want float32
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 3}, 0},
		{[]float32{2, 0}, []float32{-1, 0}, -1},
		{[]float32{1, 2, 3, 4, 5}, []float32{1, 2, 3, 4, 5}, 1},
		{[]float32{0, 0}, []float32{1, 0}, 0},
		{[]float32{1}, []float32{1, 0}, 0},
	}
	for _, tt := range tests {
		if got := embed.Cosine(tt.a, tt.b); got < tt.want-1e-6 || got > tt.want+1e-6 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestEmbedCachedKeepsProgress: a run that fails part way leaves the
// batches it got in the cache; the next run asks only for the rest.
func TestEmbedCachedKeepsProgress(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	requests, failAt := 0, 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		requests++
		fail := requests == failAt
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		vecs := make([][]float32, len(req.Input))
		for i := range vecs {
			vecs[i] = []float32{1, float32(len(req.Input[i]))}
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": vecs})
	}))
	t.Cleanup(srv.Close)
	c, err := embed.New(config.Embeddings{Provider: "ollama", Model: "m", BaseURL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cache := embed.NewMemoryCache("m")
	texts := make([]string, embed.BatchSize+5)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	if _, missed, err := c.EmbedCached(t.Context(), cache, texts); err == nil || missed != len(texts) {
		t.Fatalf("first run: missed %d, err %v; want the second batch to fail", missed, err)
	}
	if cache.Len() != embed.BatchSize {
		t.Fatalf("cache holds %d vectors after the failed run, want the first batch (%d)", cache.Len(), embed.BatchSize)
	}
	vecs, missed, err := c.EmbedCached(t.Context(), cache, texts)
	if err != nil || missed != 5 || len(vecs) != len(texts) {
		t.Fatalf("second run: missed %d, err %v", missed, err)
	}
}

// A query is sent cut to MaxQueryBytes, at a character boundary; a short
// one as it is.
func TestEmbedQueryCut(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		sent = req.Input
		mu.Unlock()
		vecs := make([][]float32, len(req.Input))
		for i := range vecs {
			vecs[i] = []float32{1, 0}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": vecs})
	}))
	t.Cleanup(srv.Close)
	c, err := embed.New(config.Embeddings{Provider: config.EmbeddingsOllama, Model: "m", BaseURL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := "x" + strings.Repeat("é", embed.MaxQueryBytes) // byte MaxQueryBytes is inside an "é"
	if _, err := c.EmbedQueries(t.Context(), []string{"weather forecast", long}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || sent[0] != "weather forecast" {
		t.Fatalf("sent %.40q, want the short query as it is", sent)
	}
	if got := sent[1]; len(got) != embed.MaxQueryBytes-1 || !strings.HasPrefix(long, got) || !utf8.ValidString(got) {
		t.Errorf("long query sent as %d bytes (valid UTF-8: %v), want its first %d", len(got), utf8.ValidString(got), embed.MaxQueryBytes-1)
	}
}

// TestCacheRefusesPlantedFiles: what someone else put at the cache path
// is not read: a link (its target stays unread), a FIFO (which would
// hang the open, and with it the hub's start, until a writer came), a
// file others may write, and one above MaxCacheBytes. Each is reported
// with its path and reason and the cache starts empty; Save replaces it.
func TestCacheRefusesPlantedFiles(t *testing.T) {
	t.Parallel()
	// A real cache file to plant copies of.
	good := t.TempDir()
	cache, _ := embed.OpenCache(good, "m")
	cache.Put("x", []float32{1, 0})
	if err := cache.Save(); err != nil {
		t.Fatal(err)
	}
	valid, err := os.ReadFile(embed.CachePath(good, "m"))
	if err != nil {
		t.Fatal(err)
	}

	plants := map[string]func(path string) error{
		"symlink": func(path string) error { return os.Symlink(embed.CachePath(good, "m"), path) },
		"world-writable": func(path string) error {
			if runtime.GOOS == "windows" {
				return errSkip
			}
			if err := os.WriteFile(path, valid, 0o600); err != nil {
				return err
			}
			return os.Chmod(path, 0o666)
		},
		"oversize": func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			f.Write(valid)
			return f.Truncate(embed.MaxCacheBytes + 1) // sparse: costs no disk
		},
		"fifo": mkfifo,
	}
	for name, plant := range plants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := embed.CachePath(dir, "m")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := plant(path); err != nil {
				t.Skipf("cannot plant a %s here: %v", name, err)
			}
			done := make(chan struct{})
			var cache *embed.Cache
			var err error
			go func() {
				defer close(done)
				cache, err = embed.OpenCache(dir, "m")
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				unblockFIFO(path)
				<-done
				t.Fatal("OpenCache blocked on what was planted at its path")
			}
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("OpenCache = %v; want an error naming %s", err, path)
			}
			if cache.Len() != 0 {
				t.Errorf("the planted cache was trusted: %d vectors", cache.Len())
			}
			cache.Put("y", []float32{0, 1})
			if err := cache.Save(); err != nil {
				t.Fatalf("Save over the planted file: %v", err)
			}
			if again, err := embed.OpenCache(dir, "m"); err != nil || again.Len() != 1 {
				t.Errorf("the saved cache: %d vectors, %v", again.Len(), err)
			}
		})
	}
}

// errSkip: this platform cannot plant that kind of file.
var errSkip = errors.New("not on this platform")

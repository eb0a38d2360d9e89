package hub

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/embed"
	"github.com/mcp-hub/mcp-hub/index"
	"github.com/mcp-hub/mcp-hub/internal/safe"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// semantic is hybrid search's half outside the index: the embeddings
// endpoint of discovery.embeddings, the on-disk cache of the tools'
// vectors, and the background run that embeds a new catalog's tools.
//
// A catalog is searched lexically until its vectors are attached: at once
// when the cache holds every tool (a restart, a rebuild that changed no
// deferred tool), else when the background run has embedded the rest. A
// search embeds its query, waiting at most the endpoint's timeout; an
// endpoint that is slow, down or without the catalog's vectors yet gives a
// lexical result, and the hub says so once in its log (and once more
// after it has recovered and failed again).
type semantic struct {
	cfg    config.Embeddings
	client *embed.Client
	cache  *embed.Cache
	log    *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc // the running catalog embedding, if any
	done   chan struct{}      // closed when it has ended
	closed bool

	// degraded is set after a failure was logged, cleared by a success.
	degraded atomic.Bool
	// retryFirst is the first wait before a failed catalog embedding is
	// tried again (the constant retryFirst; tests shorten it).
	retryFirst atomic.Int64
}

// A catalog whose tools could not be embedded is tried again after
// retryFirst, doubling up to retryMax, until it is replaced: the vectors
// of the batches that did arrive are kept meanwhile.
const (
	retryFirst = 15 * time.Second
	retryMax   = 5 * time.Minute
)

// newSemantic connects discovery.embeddings (already validated); nil when
// the config has none or it cannot be used (logged).
func newSemantic(cfg *config.Config, stateDir string, log *slog.Logger) *semantic {
	ec := cfg.Discovery.Embeddings
	if ec == nil || !cfg.Discovery.Enabled {
		return nil
	}
	client, err := embed.New(*ec, nil)
	if err != nil {
		log.Error("discovery.embeddings unusable: search stays lexical", "err", err)
		return nil
	}
	s := &semantic{cfg: *ec, client: client, log: log}
	s.retryFirst.Store(int64(retryFirst))
	if stateDir == "" {
		if stateDir, err = tokenstore.DefaultDir(); err != nil {
			log.Warn("discovery.embeddings: no state folder for the vector cache: tools are embedded again on each start", "err", err)
		}
	}
	model := client.Config().Provider + "/" + client.Model() // what the cached vectors are of
	if s.cache, err = embed.OpenCache(stateDir, model); err != nil {
		log.Warn("discovery.embeddings: vector cache", "err", err)
	}
	return s
}

// same reports whether s already serves ec (a reload that left it alone).
func (s *semantic) same(cfg *config.Config) bool {
	ec := cfg.Discovery.Embeddings
	if s == nil || ec == nil || !cfg.Discovery.Enabled {
		return s == nil && (ec == nil || !cfg.Discovery.Enabled)
	}
	return reflect.DeepEqual(s.cfg, *ec)
}

// attach gives c its vectors: at once from the cache when it holds them
// all, else from a background run, which replaces any run for an older
// catalog.
func (s *semantic) attach(c *Catalog) {
	if s == nil || c.searchIndex() == nil || len(c.embedTexts) == 0 {
		return
	}
	if vecs, ok := s.cached(c.embedTexts); ok {
		s.setVectors(c, vecs)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.cancel != nil {
		s.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.cancel, s.done = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		defer safe.Recover(s.log, "embedding the catalog's tools", nil)
		start := time.Now()
		var vecs [][]float32
		var asked int // texts sent to the endpoint, retries included
		for attempt := 0; ; attempt = min(attempt+1, 16) {
			var err error
			var n int
			vecs, n, err = s.client.EmbedCached(ctx, s.cache, c.embedTexts)
			asked += n
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return // a newer catalog, or the hub closing
			}
			wait := min(time.Duration(s.retryFirst.Load())<<attempt, retryMax)
			s.log.Warn("discovery.embeddings: could not embed the tools; search stays lexical, retrying", "err", err, "in", wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		if err := s.cache.Save(); err != nil {
			s.log.Warn("discovery.embeddings: vector cache not saved", "err", err)
		}
		s.setVectors(c, vecs)
		s.log.Info("discovery.embeddings: tools embedded", "tools", len(vecs), "texts_sent", asked, "took", time.Since(start).Round(time.Millisecond))
	}()
}

// cached returns every text's vector when the cache holds them all.
func (s *semantic) cached(texts []string) ([][]float32, bool) {
	vecs := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := s.cache.Get(t)
		if !ok {
			return nil, false
		}
		vecs[i] = v
	}
	return vecs, true
}

// toolVectors are a catalog's tool vectors and the endpoint they came
// from, which must embed the queries compared with them: after a reload
// that changed the model, the previous catalog's searches still ask the
// previous endpoint.
type toolVectors struct {
	vecs *index.Vectors
	sem  *semantic
}

func (s *semantic) setVectors(c *Catalog, vecs [][]float32) {
	v, err := c.searchIndex().NewVectors(vecs, s.cfg.VectorWeight())
	if err != nil {
		s.log.Warn("discovery.embeddings: search stays lexical", "err", err)
		return
	}
	c.vectors.Store(&toolVectors{vecs: v, sem: s})
}

// queryVectors embeds a search's queries, in one request within the
// endpoint's timeout; nil (and a log line, once per outage) when it
// cannot.
func (s *semantic) queryVectors(ctx context.Context, queries []string) [][]float32 {
	if s == nil {
		return nil
	}
	qvs, err := s.client.EmbedQueries(ctx, queries)
	if err != nil {
		if ctx.Err() == nil && !s.degraded.Swap(true) {
			s.log.Warn("discovery.embeddings: query not embedded, searching lexically (logged once until the endpoint answers again)", "err", err, "timeout", s.client.Timeout())
		}
		return nil
	}
	if s.degraded.Swap(false) {
		s.log.Info("discovery.embeddings: the endpoint answers again; hybrid search is back")
	}
	return qvs
}

// close stops a running catalog embedding and waits for it.
func (s *semantic) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// AwaitEmbeddings waits until the current catalog's tools have their
// vectors, for one-shot searches (`mcp-hub search`) that would otherwise
// rank lexically while a first run embeds the catalog. It returns at once
// without discovery.embeddings, and false when ctx ends first (an endpoint
// that is down keeps the run retrying).
func (h *Hub) AwaitEmbeddings(ctx context.Context) bool {
	s := h.semantic.Load()
	if s == nil {
		return true
	}
	for {
		c := h.Catalog()
		if c.vectors.Load() != nil || c.searchIndex() == nil || len(c.embedTexts) == 0 {
			return true
		}
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done == nil {
			return false // nothing running: the vectors could not be made
		}
		select {
		case <-done:
			if c.vectors.Load() == nil && h.Catalog() == c {
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
}

package embed

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/atomicfile"
	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// MaxCacheBytes bounds a cache file: about 80,000 vectors of 768
// dimensions. Vectors of the current catalog are kept first; older ones
// fill what is left, and a larger file is not read.
const MaxCacheBytes = 256 << 20

// cacheMagic starts a cache file, with its format version.
const cacheMagic = "mcp-hub-embed-v1"

// Key identifies a text's vector under one model: sha256(model, NUL, text).
type Key [sha256.Size]byte

// KeyOf is the key of text's vector under model.
func KeyOf(model, text string) Key {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k Key
	h.Sum(k[:0])
	return k
}

// Cache keeps vectors of one model in memory and in one file. It is safe
// for concurrent use. A nil *Cache caches nothing.
type Cache struct {
	path  string
	model string

	mu   sync.Mutex
	dim  int
	vecs map[Key][]float32
	used map[Key]bool // looked up or stored since the last Save: kept first
	// dirty is set when vectors were added since the file was read or
	// written.
	dirty bool
}

// CachePath is the cache file of model under stateDir:
// <stateDir>/embeddings/<hash of the model>.vec.
func CachePath(stateDir, model string) string {
	sum := sha256.Sum256([]byte(model))
	return filepath.Join(stateDir, "embeddings", hex.EncodeToString(sum[:8])+".vec")
}

// OpenCache reads the cache of model under stateDir. A missing file is an
// empty cache; an unreadable, foreign or oversized one, or one refused by
// nofollow.OpenOwned (a link, not a regular file, another owner, writable
// by others), is an empty cache and an error to log naming the path and
// the reason (Save then replaces it). Without a stateDir ("") it
// is a memory cache (NewMemoryCache). The cache is never nil.
func OpenCache(stateDir, model string) (*Cache, error) {
	if stateDir == "" {
		return NewMemoryCache(model), nil
	}
	c := &Cache{path: CachePath(stateDir, model), model: model, vecs: map[Key][]float32{}, used: map[Key]bool{}}
	err := c.load()
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err != nil {
		c.vecs, c.dim = map[Key][]float32{}, 0
		return c, fmt.Errorf("embeddings cache %s: %w (starting empty)", c.path, err)
	}
	return c, nil
}

// NewMemoryCache is a cache of model's vectors that is never written to
// disk (Save does nothing): for a hub without a state folder.
func NewMemoryCache(model string) *Cache {
	return &Cache{model: model, vecs: map[Key][]float32{}, used: map[Key]bool{}}
}

// Path is the cache file ("" for a memory cache).
func (c *Cache) Path() string {
	if c == nil {
		return ""
	}
	return c.path
}

// Len is the number of vectors held.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}

// Get returns text's vector, if cached.
func (c *Cache) Get(text string) ([]float32, bool) {
	if c == nil {
		return nil, false
	}
	k := KeyOf(c.model, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vecs[k]
	if ok {
		c.used[k] = true
	}
	return v, ok
}

// Put caches text's vector. A vector whose dimension differs from the
// cached ones (the model behind the name changed) empties the cache first.
func (c *Cache) Put(text string, v []float32) {
	if c == nil || len(v) == 0 {
		return
	}
	k := KeyOf(c.model, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dim != 0 && c.dim != len(v) {
		c.vecs, c.used = map[Key][]float32{}, map[Key]bool{}
	}
	c.dim = len(v)
	c.vecs[k] = v
	c.used[k] = true
	c.dirty = true
}

// Save writes the cache file atomically (a temporary file renamed over
// it), private to the user, if anything was added. Vectors used since the
// last Save go first; older ones follow while the file stays under
// MaxCacheBytes, and the rest are dropped from memory too.
func (c *Cache) Save() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty || c.path == "" {
		c.used = map[Key]bool{}
		return nil
	}
	per := int64(len(Key{}) + 4*c.dim)
	room := (MaxCacheBytes - int64(len(cacheMagic)+256)) / max(per, 1)
	keep := make([]Key, 0, len(c.vecs))
	for k := range c.used {
		if _, ok := c.vecs[k]; ok && int64(len(keep)) < room {
			keep = append(keep, k)
		}
	}
	for k := range c.vecs {
		if !c.used[k] && int64(len(keep)) < room {
			keep = append(keep, k)
		}
	}
	if len(keep) < len(c.vecs) {
		kept := make(map[Key][]float32, len(keep))
		for _, k := range keep {
			kept[k] = c.vecs[k]
		}
		c.vecs = kept
	}
	if err := c.write(keep); err != nil {
		return fmt.Errorf("embeddings cache %s: %w", c.path, err)
	}
	c.dirty = false
	c.used = map[Key]bool{}
	return nil
}

// File layout: magic, model length (uint32) and model, dimension and count
// (uint32 each), then count × (key, dim × float32), little-endian.
func (c *Cache) write(keys []Key) error {
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(c.path, 0o600, func(out io.Writer) error {
		w := bufio.NewWriterSize(out, 1<<16)
		w.WriteString(cacheMagic)
		var u [4]byte
		putU32 := func(n int) {
			binary.LittleEndian.PutUint32(u[:], uint32(n))
			w.Write(u[:])
		}
		putU32(len(c.model))
		w.WriteString(c.model)
		putU32(c.dim)
		putU32(len(keys))
		for _, k := range keys {
			w.Write(k[:])
			for _, x := range c.vecs[k] {
				binary.LittleEndian.PutUint32(u[:], math.Float32bits(x))
				w.Write(u[:])
			}
		}
		return w.Flush()
	})
}

// load reads the file only if the hub could have written it (see
// nofollow.OpenOwned): anyone who can write the state folder could plant
// a link, a FIFO that would hang start-up, or vectors of their own.
func (c *Cache) load() error {
	f, st, err := nofollow.OpenOwned(c.path, MaxCacheBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, MaxCacheBytes), 1<<16)
	bad := errors.New("not an mcp-hub embeddings cache of this version")
	magic := make([]byte, len(cacheMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != cacheMagic {
		return bad
	}
	var u [4]byte
	getU32 := func() (int, error) {
		if _, err := io.ReadFull(r, u[:]); err != nil {
			return 0, err
		}
		return int(binary.LittleEndian.Uint32(u[:])), nil
	}
	n, err := getU32()
	if err != nil || n > 4096 {
		return bad
	}
	model := make([]byte, n)
	if _, err := io.ReadFull(r, model); err != nil {
		return bad
	}
	if string(model) != c.model {
		return fmt.Errorf("holds vectors of model %q, not %q", model, c.model)
	}
	dim, err := getU32()
	if err != nil || dim <= 0 || dim > MaxDimensions {
		return bad
	}
	count, err := getU32()
	if err != nil || int64(count)*int64(len(Key{})+4*dim) > st.Size() {
		return bad
	}
	vecs := make(map[Key][]float32, count)
	buf := make([]byte, 4*dim)
	for range count {
		var k Key
		if _, err := io.ReadFull(r, k[:]); err != nil {
			return fmt.Errorf("truncated: %w", err)
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("truncated: %w", err)
		}
		v := make([]float32, dim)
		for i := range v {
			x := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return bad
			}
			v[i] = x
		}
		vecs[k] = v
	}
	c.vecs, c.dim = vecs, dim
	return nil
}

// EmbedCached returns one vector per text like Client.Embed, taking what
// cache holds and asking the endpoint only for the rest, a batch at a
// time; each batch is cached as it arrives, so that a run cut short (a
// newer catalog, a timeout) leaves its progress for the next. missed is
// how many texts the endpoint was asked for. The cache is not saved: call
// Save once the run is done.
func (c *Client) EmbedCached(ctx context.Context, cache *Cache, texts []string) (vecs [][]float32, missed int, err error) {
	vecs = make([][]float32, len(texts))
	var todo []int
	for i, t := range texts {
		if v, ok := cache.Get(t); ok {
			vecs[i] = v
		} else {
			todo = append(todo, i)
		}
	}
	for start := 0; start < len(todo); start += BatchSize {
		at := todo[start:min(start+BatchSize, len(todo))]
		batch := make([]string, len(at))
		for j, i := range at {
			batch[j] = texts[i]
		}
		bctx, cancel := context.WithTimeout(ctx, BatchTimeout)
		got, err := c.Embed(bctx, batch)
		cancel()
		missed += len(batch)
		if err != nil {
			return nil, missed, err
		}
		for j, i := range at {
			vecs[i] = got[j]
			cache.Put(batch[j], got[j])
		}
	}
	// A cache filled by an older version of the model may hold another
	// dimension than the endpoint answers now: embed everything again.
	for _, v := range vecs {
		if len(v) != len(vecs[0]) {
			return c.refresh(ctx, cache, texts)
		}
	}
	return vecs, missed, nil
}

// refresh embeds every text again.
func (c *Client) refresh(ctx context.Context, cache *Cache, texts []string) ([][]float32, int, error) {
	got, err := c.Embed(ctx, texts)
	if err != nil {
		return nil, len(texts), err
	}
	for i, v := range got {
		cache.Put(texts[i], v)
	}
	return got, len(texts), nil
}

// Package tokens counts the tokens of a text in OpenAI's o200k_base
// encoding, exactly as tiktoken does: the text is split as o200k_base's
// pattern splits it (split.go), and each piece that is not itself a token is merged byte pair by
// byte pair, the pair of lowest rank first.
//
// The vocabulary is o200k.bin.gz, embedded: the 200,000 tokens in rank
// order, each a uvarint length and its bytes (1.5 MiB, 1.0 MiB gzipped). It
// is read into a map on the first count, never at start-up. It replaces
// github.com/tiktoken-go/tokenizer/codec, whose vocabulary is a Go map
// literal that cost 6.5 MiB of the release binary; that package remains
// the reference the tests compare against and the generator of o200k.bin
// (tokens_test.go).
package tokens

import (
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"io"
	"strings"
	"sync"
)

//go:embed o200k.bin.gz
var o200kGz string

// o200k is the encoding, built on first use and read-only after: every
// count shares it, as tiktoken shares its vocabulary.
var o200k = sync.OnceValue(func() *encoding {
	zr, err := gzip.NewReader(strings.NewReader(o200kGz))
	if err != nil {
		panic("tokens: o200k.bin.gz: " + err.Error())
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		panic("tokens: o200k.bin.gz: " + err.Error())
	}
	return &encoding{ranks: readRanks(string(data))}
})

type encoding struct {
	ranks map[string]uint32
}

// readRanks reads the embedded vocabulary: token i's bytes at rank i.
func readRanks(data string) map[string]uint32 {
	ranks := make(map[string]uint32, 200_000)
	for rank := uint32(0); len(data) > 0; rank++ {
		n, k := binary.Uvarint([]byte(data[:min(len(data), binary.MaxVarintLen64)]))
		if k <= 0 || uint64(len(data)-k) < n {
			panic("tokens: o200k.bin is corrupt")
		}
		if n > 0 { // a rank o200k_base leaves unused
			ranks[data[k:k+int(n)]] = rank
		}
		data = data[k+int(n):]
	}
	return ranks
}

// Count returns the number of o200k_base tokens in s. Invalid UTF-8 is
// counted as tiktoken counts it by default: each bad byte as U+FFFD.
func Count(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	e := o200k()
	count := 0
	split([]rune(s), func(r []rune) {
		piece := string(r)
		if _, ok := e.ranks[piece]; ok {
			count++
		} else {
			count += e.merged(piece)
		}
	})
	return count, nil
}

// merged returns how many tokens byte-pair encoding merges piece into:
// parts start as its bytes; the adjacent pair whose concatenation has the
// lowest rank (the leftmost among equals) merges, until none is a token.
// The parts are a linked list and the candidate pairs a heap, so a long
// piece costs O(n log n), not O(n²).
func (e *encoding) merged(piece string) int {
	n := int32(len(piece))
	next := make([]int32, n+1) // next[i]: the start of the part after the one at i; -1 past the end
	rank := make([]uint32, n+1)
	prev := make([]int32, n+1)
	for i := range next {
		next[i], prev[i], rank[i] = int32(i)+1, int32(i)-1, noRank
	}
	next[n] = -1
	rankOf := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		if r, ok := e.ranks[piece[i:next[j]]]; ok {
			return r
		}
		return noRank
	}
	var h pairHeap
	for i := int32(0); i+2 <= n; i++ {
		if rank[i] = rankOf(i); rank[i] != noRank {
			h.push(pair{rank[i], i})
		}
	}
	parts := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.start
		if rank[i] != top.rank {
			continue // stale: the part at i changed since
		}
		j := next[i]
		k := next[j]
		rank[j] = noRank
		next[i] = k
		if k >= 0 {
			prev[k] = i
		}
		parts--
		for _, b := range [2]int32{i, prev[i]} {
			if b < 0 {
				continue
			}
			if rank[b] = rankOf(b); rank[b] != noRank {
				h.push(pair{rank[b], b})
			}
		}
	}
	return parts
}

const noRank = ^uint32(0)

// pair is a candidate merge: the part starting at start with the next.
type pair struct {
	rank  uint32
	start int32
}

// pairHeap is a min-heap by rank, then start (leftmost first).
type pairHeap []pair

func (h pairHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].start < h[b].start
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	*h = s
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if r := c + 1; r < len(s) && s.less(r, c) {
			c = r
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	return top
}

package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-hub/mcp-hub/index"
)

func TestMissTmp(t *testing.T) {
	set := os.Getenv("MISS")
	if set == "" {
		t.Skip()
	}
	dir := filepath.Join(benchDir, set)
	c, _ := LoadCorpus(filepath.Join(dir, "corpus.json"))
	qs, _ := LoadQueries(filepath.Join(dir, "queries-dev.jsonl"))
	o := index.DefaultOptions()
	o.ServerDescriptionBoost = 0
	ix, _ := index.NewWithOptions(c.Tools(), o)
	rep := Run(ix, qs, Options{})
	for _, m := range rep.Misses(40, 100) {
		fmt.Printf("%s rank %d: %s\n   gold %v\n   above %v\n", m.Query.Query.ID, m.Rank, m.Query.Query.Query, m.Query.Gold, m.Above)
	}
}

package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

func TestZZHybridBench(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	t.Setenv(tokenstore.EnvStateDir, t.TempDir())
	srv := fixture.StartEmbeddings(t, nil)
	srv.Dim = 1024
	for _, set := range []string{"etom-l2", "livemcpbench", "etom-l1"} {
		out, _, err := runEvalApp(t, "--corpus", "../../testdata/bench/"+set+"/corpus.json", "--queries", "../../testdata/bench/"+set+"/queries-dev.jsonl", "--embeddings", "ollama:bow", "--embeddings-url", srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(set)
		fmt.Println(out)
	}
}

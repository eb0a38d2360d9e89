package eval

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcp-hub/mcp-hub/index"
)

func TestTuneTmp(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	base := index.DefaultOptions()
	type v struct {
		name string
		o    index.Options
	}
	mod := func(f func(o *index.Options)) index.Options { o := base; f(&o); return o }
	plain := index.Options{NameBoost: 1, DescriptionBoost: 1, ServerBoost: 1, K1: 1.2, B: 0.75}
	vs := []v{
		{"plain", plain},
		{"plain+stop", func() index.Options { o := plain; o.StopWords = true; return o }()},
		{"plain+stop+stem", func() index.Options { o := plain; o.StopWords = true; o.Stem = true; return o }()},
		{"default", base},
		{"nosyn", mod(func(o *index.Options) { o.SynonymWeight = 0 })},
		{"noparams", mod(func(o *index.Options) { o.ParamNameBoost = 0; o.ParamDescriptionBoost = 0 })},
		{"nosdesc", mod(func(o *index.Options) { o.ServerDescriptionBoost = 0 })},
	}
	for _, x := range vs {
		l2 := runDevSet(t, "etom-l2", x.o)
		lm := runDevSet(t, "livemcpbench", x.o)
		l1 := runDevSet(t, "etom-l1", x.o)
		fmt.Printf("%-20s l2 h1 %.3f h5 %.3f mrr %.3f | lm r5 %.3f | l1 h1 %.3f | p50 %.0f p99 %.0f\n", x.name, l2.HitAt1, l2.HitAt5, l2.MRRAt10, lm.RecallAt5, l1.HitAt1, l2.P50us, l2.P99us)
	}
}

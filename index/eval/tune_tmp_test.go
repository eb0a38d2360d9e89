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
	_ = plain
	vs := []v{{"default", base}}
	for _, x := range []float64{0, 0.1, 0.2} {
		vs = append(vs, v{fmt.Sprintf("sdesc=%.1f", x), mod(func(o *index.Options) { o.ServerDescriptionBoost = x })})
	}
	for _, x := range []float64{1.5, 2, 4, 6} {
		vs = append(vs, v{fmt.Sprintf("name=%.1f", x), mod(func(o *index.Options) { o.NameBoost = x })})
	}
	for _, x := range []float64{0.5, 2, 3} {
		vs = append(vs, v{fmt.Sprintf("server=%.1f", x), mod(func(o *index.Options) { o.ServerBoost = x })})
	}
	for _, x := range []float64{0.2, 1, 1.5} {
		vs = append(vs, v{fmt.Sprintf("pname=%.1f", x), mod(func(o *index.Options) { o.ParamNameBoost = x })})
	}
	for _, x := range []float64{0.1, 0.6, 1} {
		vs = append(vs, v{fmt.Sprintf("pdesc=%.1f", x), mod(func(o *index.Options) { o.ParamDescriptionBoost = x })})
	}
	for _, x := range []float64{0.6, 0.9, 1.6, 2.0} {
		vs = append(vs, v{fmt.Sprintf("k1=%.1f", x), mod(func(o *index.Options) { o.K1 = x })})
	}
	for _, x := range []float64{0.3, 0.5, 0.9} {
		vs = append(vs, v{fmt.Sprintf("b=%.1f", x), mod(func(o *index.Options) { o.B = x })})
	}
	for _, x := range []float64{0.3, 0.8} {
		vs = append(vs, v{fmt.Sprintf("syn=%.1f", x), mod(func(o *index.Options) { o.SynonymWeight = x })})
	}
	vs = append(vs, v{"nostem", mod(func(o *index.Options) { o.Stem = false })})
	for _, x := range vs {
		l2 := runDevSet(t, "etom-l2", x.o)
		lm := runDevSet(t, "livemcpbench", x.o)
		l1 := runDevSet(t, "etom-l1", x.o)
		fmt.Printf("%-20s l2 h1 %.3f h5 %.3f mrr %.3f | lm r5 %.3f | l1 h1 %.3f | p50 %.0f p99 %.0f\n", x.name, l2.HitAt1, l2.HitAt5, l2.MRRAt10, lm.RecallAt5, l1.HitAt1, l2.P50us, l2.P99us)
	}
}

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
	for _, x := range []float64{0.25, 0.5, 1} {
		vs = append(vs, v{fmt.Sprintf("qtf=%.2f", x), mod(func(o *index.Options) { o.QueryTF = x })})
	}
	for _, x := range []float64{0.25, 1, 1.5} {
		vs = append(vs, v{fmt.Sprintf("pname=%.2f", x), mod(func(o *index.Options) { o.ParamNameBoost = x })})
	}
	for _, x := range []float64{0.1, 0.2, 0.5} {
		vs = append(vs, v{fmt.Sprintf("pdesc=%.2f", x), mod(func(o *index.Options) { o.ParamDescriptionBoost = x })})
	}
	for _, x := range []float64{2, 4} {
		vs = append(vs, v{fmt.Sprintf("name=%.2f", x), mod(func(o *index.Options) { o.NameBoost = x })})
	}
	for _, x := range []float64{0.5, 2} {
		vs = append(vs, v{fmt.Sprintf("server=%.2f", x), mod(func(o *index.Options) { o.ServerBoost = x })})
	}
	vs = append(vs, v{"plural", mod(func(o *index.Options) { o.Stemmer = index.StemPlural })})
	vs = append(vs, v{"snowball", mod(func(o *index.Options) { o.Stemmer = index.StemSnowball })})
	for _, x := range []float64{0.9, 1.5} {
		vs = append(vs, v{fmt.Sprintf("k1=%.2f", x), mod(func(o *index.Options) { o.K1 = x })})
	}
	for _, x := range []float64{0.6, 0.9} {
		vs = append(vs, v{fmt.Sprintf("b=%.2f", x), mod(func(o *index.Options) { o.B = x })})
	}
	for _, x := range vs {
		l2 := runDevSet(t, "etom-l2", x.o)
		lm := runDevSet(t, "livemcpbench", x.o)
		l1 := runDevSet(t, "etom-l1", x.o)
		fmt.Printf("%-20s l2 h1 %.3f h5 %.3f mrr %.3f | lm r5 %.3f | l1 h1 %.3f | p50 %.0f p99 %.0f\n", x.name, l2.HitAt1, l2.HitAt5, l2.MRRAt10, lm.RecallAt5, l1.HitAt1, l2.P50us, l2.P99us)
	}
}

package index

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// axisVectors gives tool i of n the unit vector along axis axes[i].
func axisVectors(n, dim int, axes []int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		out[i][axes[i]] = 1
	}
	return out
}

func TestEmbedText(t *testing.T) {
	t.Parallel()
	tools := wideTools(t)
	tests := []struct {
		tool Tool
		want string
	}{
		{tools[0], "get forecast. Get weather forecast for a location.. Parameters: location, units"},
		{tools[5], "brave web search. Search the web using Brave"},
		{Tool{Name: "x__readFile", Server: "x", Title: "Read a file", Description: "  Reads\n a file.  "}, "read file. Read a file. Reads a file."},
	}
	for _, tt := range tests {
		if got := EmbedText(tt.tool); got != tt.want {
			t.Errorf("EmbedText(%s) = %q, want %q", tt.tool.Name, got, tt.want)
		}
	}
	long := EmbedText(Tool{Name: "long", Description: strings.Repeat("é", 5000)})
	if len(long) > maxEmbedTextBytes || !strings.HasSuffix(long, "é") {
		t.Errorf("a long text is %d bytes or cut inside a character", len(long))
	}
}

func TestSearchHybrid(t *testing.T) {
	t.Parallel()
	tools := wideTools(t)
	ix := mustNew(t, tools)
	// Axes: the weather tools share one, clock__now has its own, the rest
	// another.
	v, err := ix.NewVectors(axisVectors(len(tools), 4, []int{0, 0, 2, 2, 1, 3, 3}), DefaultVectorWeight)
	if err != nil {
		t.Fatal(err)
	}
	timeAxis := []float32{0, 1, 0, 0}

	// A query no word of which is indexed still finds the nearest tool.
	if got := ix.SearchHybrid("what o'clock is it", timeAxis, v, "", 3); first(got) != "clock__now" {
		t.Errorf("vector-only query: %v", names(got))
	}
	// A tool first in both rankings stays first.
	if got := ix.SearchHybrid("current time timezone", timeAxis, v, "", 3); first(got) != "clock__now" {
		t.Errorf("agreeing rankings: %v", names(got))
	}
	// Both rankings take part: the lexical best (math__multiply) leads,
	// the vectors' best (clock__now, no word in common) comes next, ahead
	// of a weak lexical match (math__add: "numbers" only); tools neither
	// ranking supports are left out.
	got := ix.SearchHybrid("multiply numbers", timeAxis, v, "", 5)
	if want := []string{"math__multiply", "clock__now", "math__add"}; !reflect.DeepEqual(names(got), want) {
		t.Errorf("fused ranking = %v, want %v", names(got), want)
	}
	// The weight sets how far the vectors reach: at the most, their best
	// leads; at a tenth of the default it falls behind the weak lexical
	// match.
	for _, tt := range []struct {
		weight float64
		want   []string
	}{
		{MaxVectorWeight, []string{"clock__now", "math__multiply", "math__add"}},
		{DefaultVectorWeight / 10, []string{"math__multiply", "math__add", "clock__now"}},
	} {
		v := mustVectorsWeighted(t, ix, axisVectors(len(tools), 4, []int{0, 0, 2, 2, 1, 3, 3}), tt.weight)
		if got := ix.SearchHybrid("multiply numbers", timeAxis, v, "", 5); !reflect.DeepEqual(names(got), tt.want) {
			t.Errorf("weight %g: %v, want %v", tt.weight, names(got), tt.want)
		}
	}
	// A server filter holds for the vector ranking too.
	for _, r := range ix.SearchHybrid("what time", timeAxis, v, "weather", 5) {
		if r.Server != "weather" {
			t.Errorf("server filter let %s through", r.Name)
		}
	}
	if got := ix.SearchHybrid("time", timeAxis, v, "nope", 5); got != nil {
		t.Errorf("unknown server: %v", names(got))
	}
	// Unusable vectors: the lexical ranking, exactly.
	other := mustNew(t, tools)
	for name, tc := range map[string]struct {
		qv []float32
		v  *Vectors
	}{
		"nil vectors":       {timeAxis, nil},
		"nil query":         {nil, v},
		"other dimension":   {[]float32{1, 0}, v},
		"another's vectors": {timeAxis, mustVectors(t, other, axisVectors(len(tools), 4, []int{0, 0, 2, 2, 1, 3, 3}))},
	} {
		got, want := ix.SearchHybrid("weather forecast", tc.qv, tc.v, "", 5), ix.Search("weather forecast", "", 5)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want the lexical %v", name, names(got), names(want))
		}
	}
}

func mustVectors(t *testing.T, ix *Index, vecs [][]float32) *Vectors {
	t.Helper()
	return mustVectorsWeighted(t, ix, vecs, DefaultVectorWeight)
}

func mustVectorsWeighted(t *testing.T, ix *Index, vecs [][]float32, weight float64) *Vectors {
	t.Helper()
	v, err := ix.NewVectors(vecs, weight)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNewVectorsChecks(t *testing.T) {
	t.Parallel()
	ix := mustNew(t, wideTools(t))
	if _, err := ix.NewVectors(axisVectors(3, 4, []int{0, 1, 2}), DefaultVectorWeight); err == nil {
		t.Error("3 vectors for 7 tools accepted")
	}
	vecs := axisVectors(7, 4, []int{0, 0, 0, 0, 0, 0, 0})
	vecs[3] = []float32{1, 0}
	if _, err := ix.NewVectors(vecs, DefaultVectorWeight); err == nil {
		t.Error("mixed dimensions accepted")
	}
	for _, w := range []float64{0, -0.5, MaxVectorWeight + 1, math.NaN(), math.Inf(1)} {
		if _, err := ix.NewVectors(axisVectors(7, 4, []int{0, 0, 0, 0, 0, 0, 0}), w); err == nil {
			t.Errorf("vector weight %g accepted", w)
		}
	}
}

// TestSignatureCandidates: on a catalog large enough for the sign-bit
// prefilter (more than exactUpTo times the candidates), small ones
// included, the vector ranking still finds each tool from a query near it
// and agrees with an exact ranking on most of its top 10; below that it is
// the exact ranking.
func TestSignatureCandidates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tools, dim int
		minShare   float64 // of the exact top 10
	}{
		{3000, 384, 0.9},
		{300, 512, 0.9}, // small catalogs go through the signatures too
		{80, 512, 1},    // at most twice the candidates: exact
	} {
		n, dim := tc.tools, tc.dim
		tools := make([]Tool, n)
		for i := range tools {
			tools[i] = Tool{Name: fmt.Sprintf("s%d__tool_%d", i%50, i), Server: fmt.Sprintf("s%d", i%50), Description: "a tool"}
		}
		ix := mustNew(t, tools)
		vecs := randomVectors(n, dim, 7)
		v := mustVectors(t, ix, vecs)
		queries := randomVectors(50, dim, 8)
		agree := 0
		for q := range 50 {
			// A query near tool d: its vector plus noise.
			d := q * 37 % n
			qv := make([]float32, dim)
			for j := range qv {
				qv[j] = vecs[d][j] + 0.3*queries[q][j]
			}
			got := v.nearest(qv, -1, 10)
			if got[0] != int32(d) {
				t.Errorf("%d tools: query near tool %d: nearest %v", n, d, got[:3])
			}
			exact := make([]int32, n)
			sims := make([]float32, n)
			for i := range exact {
				exact[i], sims[i] = int32(i), dot(qv, vecs[i])
			}
			slices.SortFunc(exact, func(a, b int32) int { return cmp.Compare(sims[b], sims[a]) })
			for _, x := range got {
				if slices.Contains(exact[:10], x) {
					agree++
				}
			}
		}
		if share := float64(agree) / 500; share < tc.minShare {
			t.Errorf("%d tools of %d dimensions: the ranking shares %.2f of the exact top 10, want at least %.2f", n, dim, share, tc.minShare)
		}
		// Within one server the prefilter keeps to that server.
		for _, d := range v.nearest(queries[0], ix.servers["s7"], 10) {
			if tools[d].Server != "s7" {
				t.Fatalf("%d tools: server filter let %s through", n, tools[d].Name)
			}
		}
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

package index

import (
	"slices"
	"testing"
)

func TestInterleave(t *testing.T) {
	r := func(names ...string) []Result {
		out := make([]Result, len(names))
		for i, n := range names {
			out[i] = Result{Name: n}
		}
		return out
	}
	cases := []struct {
		name     string
		rankings [][]Result
		k        int
		want     []string
	}{
		{"one ranking is itself", [][]Result{r("a", "b", "c")}, 2, []string{"a", "b"}},
		{"round robin", [][]Result{r("a", "b"), r("x", "y"), r("p")}, 5, []string{"a", "x", "p", "b", "y"}},
		{"a tool found twice counts at its earlier place", [][]Result{r("a", "b"), r("b", "c")}, 4, []string{"a", "b", "c"}},
		{"k cuts mid-round", [][]Result{r("a", "b"), r("x", "y")}, 3, []string{"a", "x", "b"}},
		{"short and empty rankings", [][]Result{nil, r("a"), r("x", "y", "z")}, 9, []string{"a", "x", "y", "z"}},
		{"nothing", nil, 5, nil},
		{"k 0", [][]Result{r("a")}, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, h := range Interleave(tc.rankings, tc.k) {
				got = append(got, h.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Interleave = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStepsLimit(t *testing.T) {
	for _, tc := range []struct{ limit, n, want int }{
		{5, 0, 5}, {5, 1, 5}, {5, 2, 6}, {5, 4, 8}, {5, 6, 10}, {5, 10, 10}, {1, 3, 2}, {3, 2, 4},
	} {
		if got := StepsLimit(tc.limit, tc.n); got != tc.want {
			t.Errorf("StepsLimit(%d, %d) = %d, want %d", tc.limit, tc.n, got, tc.want)
		}
	}
}

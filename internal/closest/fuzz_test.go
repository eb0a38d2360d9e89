package closest

// Fuzz target and limits of Closest (issue 6).
//
//	go test -run '^$' -fuzz '^FuzzClosest$' -fuzztime 20s ./internal/closest

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzClosest: Closest never panics; it returns at most n distinct names,
// all among the candidates. Candidates are the lines of the second input.
func FuzzClosest(f *testing.F) {
	f.Add("math__ad", "math__add\nmath__multiply\nweather__get_forecast", 3)
	f.Add("weather__get_forcast", "weather__get_forecast\nweather__get_current", 3)
	f.Add("add", "math__add\nmath__add", 1)
	f.Add("getForecast", "weather__get_forecast", 2)
	f.Add("", "a\nb", 3)
	f.Add("x", "", 3)
	f.Add("天気", "unicode__天気_予報\n天気", 5)
	f.Add("\xff\xfe", "\xff\n\xfe", 2)
	f.Add("aaaa", "aaaa\nAAAA\na_a_a_a", 0)
	f.Add("a", "a", -5)
	f.Fuzz(func(t *testing.T, name, cands string, n int) {
		if len(cands) > 4096 {
			return // candidates are a catalog's names, each at most 64 characters
		}
		var candidates []string
		if cands != "" {
			candidates = strings.Split(cands, "\n")
		}
		got := Closest(name, candidates, n)
		if n <= 0 && len(got) > 0 {
			t.Fatalf("Closest(%q, %q, %d) = %q for n <= 0", name, candidates, n, got)
		}
		if n > 0 && len(got) > n {
			t.Fatalf("Closest(%q, %q, %d) returned %d names", name, candidates, n, len(got))
		}
		seen := map[string]bool{}
		for _, g := range got {
			if !slices.Contains(candidates, g) {
				t.Fatalf("Closest(%q, %q, %d) returned %q, not a candidate", name, candidates, n, g)
			}
			if seen[g] {
				t.Fatalf("Closest(%q, %q, %d) returned %q twice", name, candidates, n, g)
			}
			seen[g] = true
		}
		// A candidate equal to the name is always suggested first.
		if n > 0 && len(name) <= maxNameLen && utf8.ValidString(name) && strings.TrimSpace(name) != "" && slices.Contains(candidates, name) {
			if len(got) == 0 || !strings.EqualFold(got[0], name) && alnum(strings.ToLower(got[0])) != alnum(strings.ToLower(name)) {
				t.Fatalf("Closest(%q, %q, %d) = %q: the exact name is not first", name, candidates, n, got)
			}
		}
	})
}

// TestClosestLongName: a name longer than any tool name gets no
// suggestions, at once. Found while writing FuzzClosest: the edit distance
// made a 128 KiB name cost 0.9 s against 50 candidates, so one tools/call
// with a 4 MiB name kept the hub busy for half a minute.
func TestClosestLongName(t *testing.T) {
	var cands []string
	for i := range 1000 {
		cands = append(cands, "server__get_thing_"+strings.Repeat("x", i%40))
	}
	name := strings.Repeat("get_thing ", 400_000)
	start := time.Now()
	if got := Closest(name, cands, 3); got != nil {
		t.Errorf("Closest(4 MB name) = %q, want nil", got)
	}
	if took := time.Since(start); took > 10*time.Second { // quadratic would take minutes
		t.Errorf("Closest(4 MB name) took %s", took)
	}
	// Up to the bound, names are still compared.
	if got := Closest("server__get_thing_xx", cands, 1); len(got) != 1 {
		t.Errorf("Closest(short name) = %q, want one suggestion", got)
	}
}

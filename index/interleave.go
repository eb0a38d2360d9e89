package index

// Interleave merges the rankings of the steps of one task into one list of
// at most k tools: the first of every ranking, then the second of every
// ranking, and so on, each tool once (where two steps find the same tool,
// the earlier place counts). Every step gets its best tools into a short
// list, which a single ranking of the whole task does not do: there the
// words of the dominant step outweigh the rest (TUNING.md, round 4).
//
// Interleave is prefix-stable: with rankings of at least k tools each,
// Interleave(r, j) is the first j tools of Interleave(r, k) for j <= k.
func Interleave(rankings [][]Result, k int) []Result {
	var out []Result
	seen := make(map[string]bool)
	for depth := 0; len(out) < k; depth++ {
		more := false
		for _, r := range rankings {
			if depth >= len(r) {
				continue
			}
			more = true
			if hit := r[depth]; !seen[hit.Name] {
				seen[hit.Name] = true
				out = append(out, hit)
				if len(out) == k {
					break
				}
			}
		}
		if !more {
			break
		}
	}
	return out
}

// StepsLimit is how many tools a search of n steps returns when one query
// returns limit: one more per step after the first, at most twice limit.
// A task of several steps needs a tool for each: the extra slot per step
// is where most of what a larger list finds is found, at a fraction of its
// tokens (TUNING.md, round 4).
func StepsLimit(limit, n int) int {
	return max(limit, min(2*limit, limit+n-1))
}

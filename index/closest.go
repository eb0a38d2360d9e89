package index

import "github.com/mcp-hub/mcp-hub/internal/closest"

// Closest returns up to n of candidates that are close to name, best first
// (closest.Closest): "Did you mean" suggestions for a mistyped tool name.
func Closest(name string, candidates []string, n int) []string {
	return closest.Closest(name, candidates, n)
}

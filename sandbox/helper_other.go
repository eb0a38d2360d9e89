//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// RunHelper is Linux's: other systems need no helper inside the sandbox.
func RunHelper(args []string) int {
	fmt.Fprintln(os.Stderr, "mcp-hub sandbox-exec: only used inside a Linux sandbox")
	return 2
}

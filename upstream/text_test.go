package upstream

import (
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// ftText is the text contents of a tool result, concatenated.
func ftText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

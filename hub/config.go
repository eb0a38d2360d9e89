package hub

import (
	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
)

// LoadConfig is config.Load, knowing the builtin servers of package
// builtin.
func LoadConfig(path string) (*config.Config, error) { return config.Load(path, builtin.Names()) }

// ParseConfig is config.Parse, knowing the builtin servers of package
// builtin.
func ParseConfig(path string, data []byte) (*config.Config, error) {
	return config.Parse(path, data, builtin.Names())
}

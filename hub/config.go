package hub

import (
	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
)

// The hub's configuration is package config's; the hub's API names the
// types it takes as it always has.
type (
	Config        = config.Config
	ServerConfig  = config.Server
	Discovery     = config.Discovery
	ToolFilter    = config.ToolFilter
	Restart       = config.Restart
	Toolset       = config.Toolset
	ToolSelection = config.ToolSelection
	ConfigError   = config.Error
)

// MaxConfigBytes caps a config file (config.MaxFileBytes).
const MaxConfigBytes = config.MaxFileBytes

// LoadConfig is config.Load, knowing the builtin servers of package
// builtin.
func LoadConfig(path string) (*Config, error) { return config.Load(path, builtin.Names()) }

// ParseConfig is config.Parse, knowing the builtin servers of package
// builtin.
func ParseConfig(path string, data []byte) (*Config, error) {
	return config.Parse(path, data, builtin.Names())
}

// ReadConfigFile reads a config file of at most MaxConfigBytes (config.ReadFile).
func ReadConfigFile(path string) ([]byte, error) { return config.ReadFile(path) }

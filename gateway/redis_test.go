package gateway_test

import (
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/gateway/redisstore"
)

// The package's tests with session_store run on Redis.
func init() { gateway.SetTestStore(redisstore.Open) }

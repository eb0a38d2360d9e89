package gateway

// openStore opens the tests' session_store URLs: redisstore.Open, which
// redis_test.go (package gateway_test, free to import it) hands over
// before any test runs. This package itself never links go-redis.
var openStore func(string) (SessionStore, error)

// SetTestStore is how redis_test.go hands it over.
func SetTestStore(open func(string) (SessionStore, error)) { openStore = open }

// redisKeyPrefix is where redisstore keeps session records.
const redisKeyPrefix = "mcp-hub:session:"

//go:build !unix

package builtin

import "context"

// lockFile is a no-op where flock is unavailable; the store's semaphore
// still serialises access within one store.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }

//go:build !unix

package builtin

// lockFile is a no-op where flock is unavailable; the store's mutex still
// serialises access within one store.
func lockFile(string) (func(), error) { return func() {}, nil }

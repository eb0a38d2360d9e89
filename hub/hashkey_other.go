//go:build !unix

package hub

// noFollow: no such flag here; readKeyFile's Lstat and SameFile checks
// refuse a link instead.
const noFollow = 0

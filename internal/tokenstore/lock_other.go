//go:build !unix && !windows

package tokenstore

import "os"

const isWindows = false

// Platforms without file locks (js, wasip1, plan9) run one process at a
// time in practice: locking always succeeds.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) {}

func replaceFile(src, dst string) error { return os.Rename(src, dst) }

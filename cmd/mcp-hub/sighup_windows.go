//go:build windows

package main

import "os"

// hangups never delivers: Windows has no SIGHUP. The config file is still
// watched.
func hangups() (<-chan os.Signal, func()) { return nil, func() {} }

//go:build !windows

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// hangups delivers SIGHUP, the Unix way to ask a daemon to re-read its
// config; stop ends the delivery.
func hangups() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

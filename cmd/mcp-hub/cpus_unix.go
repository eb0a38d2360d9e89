//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuUsage returns a clock of the CPU time this process has used.
func cpuUsage() (func() time.Duration, bool) {
	return func() time.Duration {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}, true
}

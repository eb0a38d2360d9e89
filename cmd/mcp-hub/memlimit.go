package main

import (
	"strconv"
	"strings"
)

// noLimitAbove is where a cgroup limit stops meaning anything: v1 reports
// an unset limit as about 2^63 rounded to pages.
const noLimitAbove = 1 << 62

func parseMemoryLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= noLimitAbove {
		return 0, false
	}
	return n, true
}

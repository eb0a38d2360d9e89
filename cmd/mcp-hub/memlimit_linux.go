package main

import "os"

// containerMemoryLimit reads the memory limit of the cgroup the process
// runs in: cgroup v2's memory.max, else cgroup v1's
// memory.limit_in_bytes. "max", an absent file or a value so large it
// means no limit (v1 writes the page-rounded maximum) is no limit.
func containerMemoryLimit() (int64, bool) {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		return parseMemoryLimit(string(b))
	}
	return 0, false
}

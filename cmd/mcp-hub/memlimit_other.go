//go:build !linux

package main

// containerMemoryLimit: only Linux has cgroups.
func containerMemoryLimit() (int64, bool) { return 0, false }

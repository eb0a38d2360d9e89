//go:build !linux

package main

// returnProgramPages is Linux only (MADV_PAGEOUT).
func returnProgramPages() (int64, error) { return 0, nil }

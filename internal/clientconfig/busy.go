package clientconfig

// Windows error codes that mean "the file is in use for a moment":
// ERROR_ACCESS_DENIED (a pending delete, or a scanner holding the file),
// ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION. Here, not in the Windows
// file, so that the rule is tested on every OS.
func windowsBusy(errno uintptr) bool {
	switch errno {
	case 5, 32, 33:
		return true
	}
	return false
}

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights by the ABI version that brought them.
const (
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE
	llReadRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llV1         = 1<<13 - 1 // EXECUTE .. MAKE_SYM
	llV2         = llV1 | unix.LANDLOCK_ACCESS_FS_REFER
	llV3         = llV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	llV5         = llV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// apply restricts this thread, and the programs it runs, to the rules. A
// kernel without Landlock leaves the mounts as the only layer: Landlock
// is the second one. The caller keeps the goroutine on this thread
// (runtime.LockOSThread) until it has started the server: Landlock binds
// a thread, and Go may run the next call on another.
func (l *landlockRules) apply() error {
	if l == nil {
		return nil
	}
	runtime.LockOSThread()
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || int(abi) < 1 {
		return nil // no Landlock here (ENOSYS, EOPNOTSUPP)
	}
	handled := uint64(llV1)
	switch {
	case abi >= 5:
		handled = llV5
	case abi >= 3:
		handled = llV3
	case abi >= 2:
		handled = llV2
	}
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr.Access_fs), 0)
	if errno != 0 {
		return fmt.Errorf("creating the ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	add := func(path string, rights uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil // not in this sandbox
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		defer unix.Close(pfd)
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			rights &= llFileRights | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights & handled, Parent_fd: int32(pfd)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("%s: %w", path, errno)
		}
		return nil
	}
	for _, p := range l.Read {
		if err := add(p, llReadRights); err != nil {
			return err
		}
	}
	for _, p := range l.Write {
		if err := add(p, handled); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("restricting: %w", errno)
	}
	return nil
}

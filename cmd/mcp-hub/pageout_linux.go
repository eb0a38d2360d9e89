package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// madvPageout is MADV_PAGEOUT (Linux 5.4): reclaim the range now, as the
// kernel would under memory pressure. Content is kept: a clean page of a
// file is dropped and read again from the file when next touched.
const madvPageout = 21

// returnProgramPages asks the kernel to reclaim the pages of the program's
// own file (code, read-only data, the tables the runtime reads) that this
// process has mapped, once start-up is done. Start-up runs the init code
// of every package linked in, some 250 of them spread over the whole
// binary, and Linux maps 64 KiB around each page touched: most of an idle
// hub's resident memory was pages of its program it touched once. What the
// hub goes on using comes back on first use. Only read-only mappings of
// the executable are named; its writable data is left alone. Pages another
// process also maps (a second hub) are not reclaimed.
func returnProgramPages() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 00400000-012ef000 r-xp 00000000 fe:00 9987091   /path/to/mcp-hub
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		var start, end uintptr
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &start, &end); err != nil || end <= start {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPageout); errno != 0 {
			return total, fmt.Errorf("madvise(MADV_PAGEOUT): %w", errno)
		}
		total += int64(end - start)
	}
	return total, sc.Err()
}

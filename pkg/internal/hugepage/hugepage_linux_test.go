package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseMarksTheMemory: the kernel marks the memory of an advised
// slice for huge pages (VmFlags "hg" in /proc/self/smaps), and leaves a
// small slice's alone.
func TestAdviseMarksTheMemory(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	big := make([]int64, 6<<20/8) // 6 MiB: two whole huge pages at least
	Advise(big)
	if !hugeFlag(t, unsafe.Pointer(&big[len(big)/2])) {
		t.Error("the middle of a 6 MiB slice is not marked for huge pages after Advise")
	}
	small := make([]byte, 64<<10)
	Advise(small)
	if hugeFlag(t, unsafe.Pointer(&small[0])) {
		t.Error("a 64 KiB slice is marked for huge pages")
	}
	Advise([]byte(nil)) // nothing to advise
}

// hugeFlag reports whether the mapping that holds p has the "hg" flag.
func hugeFlag(t *testing.T, p unsafe.Pointer) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	addr := uintptr(p)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Contains(line+" ", " hg ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping holds %#x", addr)
	return false
}

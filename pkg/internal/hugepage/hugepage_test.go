package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestBytes(t *testing.T) {
	for _, n := range []int{0, 1, Min - 1, Min, Min + 12345, 3*Min + 1} {
		b := Bytes(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Bytes(%d): len %d, cap %d", n, len(b), cap(b))
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("Bytes(%d)[%d] = %d, want zero", n, i, c)
			}
		}
		for i := range b {
			b[i] = byte(i)
		}
		runtime.GC() // the buffer is kept by the slice alone
		for i, c := range b {
			if c != byte(i) {
				t.Fatalf("Bytes(%d)[%d] = %d after a collection, want %d", n, i, c, byte(i))
			}
		}
	}
}

// TestAdvise: huge pages are asked for only for a buffer of Min or more
// that spans two of them, so that a kernel's 512 MB huge pages (64 KB base
// pages) never pad a history's buffer by a gigabyte.
func TestAdvise(t *testing.T) {
	for _, c := range []struct {
		n, size int
		want    bool
	}{
		{Min, 2 << 20, true},
		{Min - 1, 2 << 20, false},
		{Min, 0, false},
		{64 << 20, 2 << 20, true},
		{Min, 4 << 20, false},
		{8 << 20, 4 << 20, true},
		{100 << 20, 512 << 20, false},
		{1 << 30, 512 << 20, true},
	} {
		if got := advise(c.n, c.size); got != c.want {
			t.Errorf("advise(%d, %d) = %v, want %v", c.n, c.size, got, c.want)
		}
	}
}

// TestAdvised checks, on a kernel with transparent huge pages, that a large
// buffer begins on a huge page and lies in a mapping advised for them (the
// "hg" flag of /proc/self/smaps).
func TestAdvised(t *testing.T) {
	size := pageSize()
	if size == 0 {
		t.Skip("the kernel states no transparent huge page size")
	}
	b := Bytes(Min + 1)
	addr := uintptr(unsafe.Pointer(&b[0]))
	if addr%uintptr(size) != 0 {
		t.Fatalf("buffer at %#x: not on a huge page of %d bytes", addr, size)
	}
	flags, err := vmFlags(addr)
	if err != nil {
		t.Skip(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("mapping of %#x has VmFlags %q, want hg (MADV_HUGEPAGE)", addr, flags)
	}
	runtime.KeepAlive(b)
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping of %#x in /proc/self/smaps", addr)
}

// mappingRange reads the address range that begins a mapping's header
// line, "7f00...-7f01... rw-p ...".
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, found := strings.Cut(line, " ")
	a, z, dash := strings.Cut(r, "-")
	if !found || !dash {
		return 0, 0, false
	}
	l, err1 := strconv.ParseUint(a, 16, 64)
	h, err2 := strconv.ParseUint(z, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(l), uintptr(h), true
}

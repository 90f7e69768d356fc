package hugepage

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// pageSize is the kernel's transparent huge page size, or 0 when it states
// none (transparent huge pages not built in).
var pageSize = sync.OnceValue(func() int {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 || n&(n-1) != 0 {
		return 0
	}
	return n
})

// aligned allocates n bytes that begin on a huge page of size bytes and
// advises their huge pages. The advice is a hint: when the kernel refuses it
// (huge pages switched off) the buffer is an ordinary one.
func aligned(n, size int) []byte {
	pages := (n + size - 1) / size
	b := make([]byte, (pages+1)*size)
	off := -int(uintptr(unsafe.Pointer(&b[0]))) & (size - 1)
	b = b[off : off+pages*size]
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b[:n:n]
}

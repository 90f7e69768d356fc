package hugepage

import (
	"syscall"
	"unsafe"
)

func advise(p unsafe.Pointer, n uintptr) {
	// Errors are ignored: EINVAL on a kernel built without transparent
	// huge pages, and the memory is as good without them.
	syscall.Madvise(unsafe.Slice((*byte)(p), n), syscall.MADV_HUGEPAGE)
}

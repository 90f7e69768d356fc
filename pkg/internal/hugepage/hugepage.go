// Package hugepage asks the kernel to back a large slice with huge pages
// when it is first written.
//
// A fresh heap is paid for page by page: every 4 KiB written for the first
// time is a page fault, and on a virtual machine a fault costs several
// microseconds, far more than clearing the page. The history's cells are
// its largest allocations, written once, so a 2 MiB page where 512 small
// ones would be faulted saves most of that cost. On Linux, whose default
// (transparent_hugepage=madvise) gives huge pages only to memory that asks
// for them, Advise asks; elsewhere it does nothing.
package hugepage

import "unsafe"

// size is the huge page size Advise aligns to: 2 MiB on x86-64 and on
// arm64 with 4 KiB pages. Where huge pages are of another size the kernel
// ignores advice that covers none.
const size = 2 << 20

// Advise asks for huge pages for the whole huge pages that s's backing
// array covers, before it is written. It is only advice: a slice of less
// than two huge pages may cover none, and the kernel may have none free.
func Advise[T any](s []T) {
	s = s[:cap(s)]
	if len(s) == 0 {
		return
	}
	n := uintptr(len(s)) * unsafe.Sizeof(s[0])
	if n < 2*size {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	beg := (start + size - 1) &^ (size - 1)
	end := (start + n) &^ (size - 1)
	if beg < end {
		advise(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), beg-start), end-beg)
	}
}

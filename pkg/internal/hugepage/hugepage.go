// Package hugepage allocates large buffers that the kernel may back with
// transparent huge pages.
//
// A fresh page of the Go heap costs a page fault when it is first written:
// about 2 µs on a virtual machine, so the 4 MB of cells a history of 360,000
// results holds cost a thousand faults, 2 ms of CPU, as they are written.
// Linux (in its "madvise" mode, the common default) backs memory with 2 MB
// pages only where a program asks with madvise(MADV_HUGEPAGE), and Go's
// runtime does not ask for its heap. Bytes asks, for the whole huge pages of
// a buffer it allocates aligned to them: one fault then maps 2 MB.
package hugepage

// Min is the least size Bytes aligns and advises: below two huge pages,
// the padding would cost more than the faults it saves.
const Min = 4 << 20

// Bytes returns a zeroed buffer of n bytes. On Linux, when n is at least
// Min and the kernel states its huge page size, the buffer begins on a huge
// page and its huge pages are advised as such; the allocation behind it is
// then up to two huge pages larger, never written past n but for the rest
// of the last huge page. The buffer is of the Go heap, and holds no
// pointers the collector would see: a caller may view it as any type
// without pointers.
func Bytes(n int) []byte {
	if n >= Min {
		if size := pageSize(); size > 0 {
			return aligned(n, size)
		}
	}
	return make([]byte, n)
}

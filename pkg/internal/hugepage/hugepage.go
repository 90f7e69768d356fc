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

// Min is the least size Bytes aligns and advises: below two huge pages of
// 2 MB, the padding would cost more than the faults it saves.
const Min = 4 << 20

// Bytes returns a zeroed buffer of n bytes. On Linux, when n is at least
// Min and two of the kernel's huge pages, the buffer begins on a huge page
// and its huge pages are advised as such; the allocation behind it is then
// up to two huge pages larger, never written past n but for the rest of
// the last huge page. (A kernel of 64 KB pages has huge pages of 512 MB:
// no buffer of a history is that large.) The buffer is of the Go heap, and
// holds no pointers the collector would see: a caller may view it as any
// type without pointers.
func Bytes(n int) []byte {
	if n >= Min { // the kernel's size is read only for a large buffer
		if size := pageSize(); advise(n, size) {
			return aligned(n, size)
		}
	}
	return make([]byte, n)
}

// advise reports whether a buffer of n bytes is taken on huge pages of
// size bytes (0: none): it must hold at least Min and two of them.
func advise(n, size int) bool { return size > 0 && n >= Min && n/2 >= size }

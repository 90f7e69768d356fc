//go:build !linux

package hugepage

import "unsafe"

func advise(unsafe.Pointer, uintptr) {}

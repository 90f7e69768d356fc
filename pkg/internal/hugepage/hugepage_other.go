//go:build !linux

package hugepage

func pageSize() int { return 0 }

func aligned(n, _ int) []byte { return make([]byte, n) }

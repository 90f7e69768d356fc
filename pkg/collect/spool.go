package collect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// DefaultMemoryBudget is how many zip bytes a collection holds in memory at
// once by default, over all its downloads. The rest go to temporary files.
const DefaultMemoryBudget = 32 << 20

// budget is the memory the spools of one collection share.
type budget struct {
	mu         sync.Mutex
	limit      int64
	held, peak int64
}

// reserve takes n bytes if they fit; it never waits.
func (b *budget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n <= 0 || b.held+n > b.limit {
		return false
	}
	b.held += n
	b.peak = max(b.peak, b.held)
	return true
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
}

func (b *budget) peakHeld() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// spool holds one downloaded zip for its parse: in memory while it fits
// the share of the budget it was given, in a temporary file from the first
// byte that does not. It is a ghapi.Spool to write and an io.ReaderAt to
// read; Close lets go of the memory and removes the file.
type spool struct {
	budget   *budget
	reserved int64 // bytes of the budget held; the most kept in memory
	dir      string
	mem      []byte   // while in memory
	f        *os.File // once spilled
	off      int64
	spilled  bool
}

// newSpool returns a spool that keeps up to reserve bytes in memory if
// the budget has room for them, and writes temporary files in dir.
func newSpool(b *budget, reserve int64, dir string) *spool {
	sp := &spool{budget: b, dir: dir}
	if b.reserve(reserve) {
		sp.reserved = reserve
	}
	return sp
}

func (sp *spool) Write(p []byte) (int, error) {
	if sp.f == nil && sp.off+int64(len(p)) > sp.reserved {
		if err := sp.spill(); err != nil {
			return 0, err
		}
	}
	if sp.f != nil {
		n, err := sp.f.Write(p)
		sp.off += int64(n)
		return n, err
	}
	if sp.mem == nil {
		sp.mem = make([]byte, 0, sp.reserved)
	}
	if end := sp.off + int64(len(p)); end > int64(len(sp.mem)) {
		sp.mem = sp.mem[:end]
	}
	copy(sp.mem[sp.off:], p)
	sp.off += int64(len(p))
	return len(p), nil
}

// spill moves what is in memory to a new temporary file and gives the
// memory back.
func (sp *spool) spill() error {
	f, err := os.CreateTemp(sp.dir, "flakegate-artifact-*.zip")
	if err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	sp.f, sp.spilled = f, true
	if _, err := f.Write(sp.mem); err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	if _, err := f.Seek(sp.off, io.SeekStart); err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	sp.mem = nil
	sp.budget.release(sp.reserved)
	sp.reserved = 0
	return nil
}

func (sp *spool) Seek(offset int64, whence int) (int64, error) {
	if sp.f != nil {
		n, err := sp.f.Seek(offset, whence)
		sp.off = n
		return n, err
	}
	switch whence {
	case io.SeekCurrent:
		offset += sp.off
	case io.SeekEnd:
		offset += int64(len(sp.mem))
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	sp.off = offset
	return offset, nil
}

func (sp *spool) Truncate(size int64) error {
	if sp.f != nil {
		return sp.f.Truncate(size)
	}
	if size < 0 || size > int64(len(sp.mem)) {
		return errors.New("truncate out of range")
	}
	sp.mem = sp.mem[:size]
	return nil
}

func (sp *spool) ReadAt(p []byte, off int64) (int, error) {
	if sp.f != nil {
		return sp.f.ReadAt(p, off)
	}
	if off < 0 {
		return 0, errors.New("read before the start")
	}
	if off >= int64(len(sp.mem)) {
		return 0, io.EOF
	}
	n := copy(p, sp.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close gives the memory back and removes the temporary file. It may be
// called more than once.
func (sp *spool) Close() error {
	var err error
	if sp.f != nil {
		err = errors.Join(sp.f.Close(), os.Remove(sp.f.Name()))
		sp.f = nil
	}
	sp.mem = nil
	if sp.reserved > 0 {
		sp.budget.release(sp.reserved)
		sp.reserved = 0
	}
	return err
}

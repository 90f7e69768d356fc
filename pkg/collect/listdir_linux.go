package collect

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"syscall"
)

// direntBufs are listDir's buffers, one per walker at a time.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// listDir appends the *.xml files in dir to files and its subdirectories
// to dirs; dir is clean. It reads the directory with getdents and takes
// each entry's type from it, as os.ReadDir does, but without an object per
// entry or a sort (LocalIn sorts what the walk found), and it builds a
// path only for a subdirectory or an .xml file: listing 7,200 files in 40
// directories took 18 ms of CPU through filepath.WalkDir. An entry whose
// type the file system does not report is looked at with lstat.
func listDir(dir string, files []found, dirs []string) ([]found, []string, error) {
	fd, err := openDir(dir)
	if err != nil {
		return files, dirs, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return files, dirs, &os.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return files, dirs, nil
		}
		if files, dirs, err = parseDirents(buf[:n], dir, files, dirs); err != nil {
			return files, dirs, err
		}
	}
}

// parseDirents appends the .xml files and the subdirectories among the
// linux_dirent64 records in b, entries of dir. A record whose length does
// not fit is an error; an entry whose type the file system does not
// report (DT_UNKNOWN: XFS without ftype, some network file systems) is
// looked at with lstat, and one removed since it was listed is passed
// over.
func parseDirents(b []byte, dir string, files []found, dirs []string) ([]found, []string, error) {
	for len(b) >= direntName {
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		if reclen < direntName || reclen > len(b) {
			return files, dirs, &os.PathError{Op: "readdirent", Path: dir, Err: syscall.EIO}
		}
		name, typ := b[direntName:reclen], b[direntType]
		b = b[reclen:]
		if i := indexNUL(name); i >= 0 {
			name = name[:i]
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		if typ != syscall.DT_DIR && typ != syscall.DT_UNKNOWN && !isXMLName(name) {
			continue
		}
		path := join(dir, name)
		if typ == syscall.DT_UNKNOWN {
			fi, err := os.Lstat(path)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue // removed since it was listed
				}
				return files, dirs, err
			}
			typ = dtOf(fi.Mode())
		}
		switch {
		case typ == syscall.DT_DIR:
			dirs = append(dirs, path)
		case isXMLName(name):
			files = append(files, found{path, typ == syscall.DT_REG})
		}
	}
	return files, dirs, nil
}

// The fields of a linux_dirent64 record: inode (8 bytes), offset (8),
// record length (2), type (1), then the name, ended by NUL.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

func openDir(dir string) (int, error) {
	for {
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

func dtOf(m os.FileMode) uint8 {
	switch {
	case m.IsDir():
		return syscall.DT_DIR
	case m.IsRegular():
		return syscall.DT_REG
	}
	return syscall.DT_LNK // anything else is looked at again before it is read
}

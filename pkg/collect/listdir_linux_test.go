package collect

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirent is one linux_dirent64 record, padded to 8 bytes as the kernel
// writes them.
func dirent(name string, typ uint8) []byte {
	n := (direntName + len(name) + 1 + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b, 1) // inode
	binary.NativeEndian.PutUint16(b[direntReclen:], uint16(n))
	b[direntType] = typ
	copy(b[direntName:], name)
	return b
}

// TestParseDirents feeds parseDirents records a file system might write,
// among them entries of unknown type, which it must look at with lstat,
// as XFS without ftype and some network file systems report every entry.
func TestParseDirents(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Mkdir(filepath.Join(dir, "dir.xml"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.xml"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "b.XML"), nil, 0o644)
	os.Symlink(filepath.Join(dir, "a.xml"), filepath.Join(dir, "link.xml"))
	var b []byte
	for _, e := range []struct {
		name string
		typ  uint8
	}{
		{".", syscall.DT_DIR}, {"..", syscall.DT_DIR},
		{"sub", syscall.DT_UNKNOWN}, {"dir.xml", syscall.DT_UNKNOWN}, {"a.xml", syscall.DT_UNKNOWN},
		{"link.xml", syscall.DT_UNKNOWN}, {"gone.xml", syscall.DT_UNKNOWN}, {"notes.txt", syscall.DT_UNKNOWN},
		{"b.XML", syscall.DT_REG}, {"c.txt", syscall.DT_REG}, {"d.xml", syscall.DT_LNK}, {"e", syscall.DT_DIR},
	} {
		b = append(b, dirent(e.name, e.typ)...)
	}
	files, dirs, err := parseDirents(b, dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	wantFiles := []found{{p("a.xml"), true}, {p("link.xml"), false}, {p("b.XML"), true}, {p("d.xml"), false}}
	if diff := cmp.Diff(wantFiles, files, cmp.AllowUnexported(found{})); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{p("sub"), p("dir.xml"), p("e")}, dirs); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
	// A record that claims more bytes than the buffer holds, or fewer
	// than its header, is refused with the directory's name.
	for _, reclen := range []uint16{4, 4096} {
		bad := dirent("x.xml", syscall.DT_REG)
		binary.NativeEndian.PutUint16(bad[direntReclen:], reclen)
		if _, _, err := parseDirents(bad, dir, nil, nil); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("record length %d: err = %v", reclen, err)
		}
	}
}

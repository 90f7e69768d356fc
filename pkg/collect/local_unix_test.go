//go:build unix

package collect

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLocalInConfines: relative paths that climb out of the workspace are
// refused,
// symbolic links out of it are skipped with a reason, and a FIFO named
// *.xml is reported, never opened (opening it would block forever).
func TestLocalInConfines(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	junit := []byte(`<testsuite name="s"><testcase classname="c" name="t"/></testsuite>`)
	os.WriteFile(filepath.Join(outside, "secret.xml"), junit, 0o644)
	os.MkdirAll(filepath.Join(ws, "results"), 0o755)
	os.WriteFile(filepath.Join(ws, "results", "ok.xml"), junit, 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.xml"), filepath.Join(ws, "results", "link.xml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "results", "fifo.xml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}

	for _, p := range []string{"../" + filepath.Base(outside) + "/*.xml", "results/../../x/*.xml", ".."} {
		if _, _, err := LocalIn(ws, []string{p}); err == nil || !strings.Contains(err.Error(), "climbs out of the workspace") {
			t.Errorf("LocalIn(%q): err %v, want climbs out of the workspace", p, err)
		}
	}
	// An absolute path is the workflow author's explicit choice.
	if got, _, err := LocalIn(ws, []string{outside}); err != nil || len(got) != 1 {
		t.Errorf("LocalIn(absolute %s): %d sources, err %v; want its one file", outside, len(got), err)
	}
	// One that names nothing here (the runner's path, from inside the
	// action's container) says where the workspace is.
	if _, missing, _ := LocalIn(ws, []string{"/home/runner/work/shop/shop/results/*.xml"}); len(missing) != 1 ||
		!strings.Contains(missing[0].Error, "matched no files (an absolute path is read where flakegate runs, which sees the workspace at "+ws) {
		t.Errorf("a runner path: %+v, want a hint naming the workspace", missing)
	}

	done := make(chan struct{})
	var srcs []string
	var skipped map[string]string
	go func() {
		defer close(done)
		got, missing, err := LocalIn(ws, []string{"results"})
		if err != nil {
			t.Error(err)
			return
		}
		skipped = map[string]string{}
		for _, m := range missing {
			skipped[filepath.Base(m.Path)] = m.Error
		}
		for _, s := range got {
			rc, err := s.Open()
			if err != nil {
				t.Error(err)
				continue
			}
			rc.Close()
			srcs = append(srcs, filepath.Base(s.Name))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("LocalIn hung on a FIFO")
	}
	if len(srcs) != 1 || srcs[0] != "ok.xml" {
		t.Errorf("read %v, want only ok.xml", srcs)
	}
	if !strings.Contains(skipped["link.xml"], "symbolic link out of the workspace") {
		t.Errorf("link.xml: %q, want a symbolic link out of the workspace", skipped["link.xml"])
	}
	if !strings.Contains(skipped["fifo.xml"], "not a regular file") {
		t.Errorf("fifo.xml: %q, want not a regular file", skipped["fifo.xml"])
	}

	// A directory linked out of the workspace: its files are regular, but
	// not the workspace's, whether named through the link, directly or by a
	// glob that begins there, or found under a directory above it (the
	// walk and globs do not follow links to directories below where they
	// begin).
	if err := os.Symlink(outside, filepath.Join(ws, "linked")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"linked", "linked/secret.xml", "linked/*.xml", "linked/**/*.xml", "linked/**/secret.xml"} {
		got, missing, err := LocalIn(ws, []string{p})
		if err != nil || len(got) != 0 || len(missing) != 1 || !strings.Contains(missing[0].Error, "linked out of the workspace") {
			t.Errorf("LocalIn(%q): %d sources, skipped %v, err %v; want secret.xml skipped as linked out", p, len(got), missing, err)
		}
	}
	if got, _, err := LocalIn(ws, []string{"."}); err != nil || len(got) != 1 || filepath.Base(got[0].Name) != "ok.xml" {
		t.Errorf("LocalIn(.): %v, err %v; want only results/ok.xml", got, err)
	}

	// Without a workspace (the command line), links are followed: the files
	// are the user's own. FIFOs still are not read.
	got, missing, err := Local([]string{filepath.Join(ws, "results")})
	if err != nil || len(got) != 2 || len(missing) != 1 {
		t.Errorf("Local: %d sources, %v skipped, err %v; want ok.xml and link.xml, the FIFO skipped", len(got), missing, err)
	}
}

// TestOpenRegular: a local file is read whole, through reads of any size;
// an empty file reads as empty; a file appended to after it was opened
// ends at the size it had; a FIFO swapped in after the walk is refused
// without blocking; and a closed file says so.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	body := []byte(strings.Repeat("<testcase/>\n", 40_000)) // several reads' worth
	full := filepath.Join(dir, "full.xml")
	os.WriteFile(full, body, 0o644)
	for _, size := range []int{1, 7, 64 << 10, 1 << 20} {
		rc, err := openRegular(full)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(readsOf{rc, size})
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("reads of %d bytes: %d bytes, err %v; want %d", size, len(got), err, len(body))
		}
		if s, ok := rc.(interface{ Size() int64 }); !ok || s.Size() != int64(len(body)) {
			t.Errorf("the reader tells no size, or a wrong one (the builder sizes its tables by it)")
		}
		rc.Close()
	}

	empty := filepath.Join(dir, "empty.xml")
	os.WriteFile(empty, nil, 0o644)
	rc, err := openRegular(empty)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(rc); err != nil || len(got) != 0 {
		t.Errorf("empty file: %q, %v", got, err)
	}
	rc.Close()

	rc, err = openRegular(full)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(full, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("appended")
	f.Close()
	got, err := io.ReadAll(readsOf{rc, 4096})
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("file appended to after opening: %d bytes, err %v; want the %d it had", len(got), err, len(body))
	}
	if err := rc.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := rc.Read(make([]byte, 8)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after close: %v, want os.ErrClosed", err)
	}
	if err := rc.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second close: %v, want os.ErrClosed", err)
	}

	fifo := filepath.Join(dir, "fifo.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if rc, err := openRegular(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		if rc != nil {
			rc.Close()
		}
		t.Errorf("FIFO: %v, want not a regular file", err)
	}
	if _, err := openRegular(filepath.Join(dir, "missing.xml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want not exist", err)
	}
}

// readsOf reads from r at most n bytes at a time.
type readsOf struct {
	r io.Reader
	n int
}

func (l readsOf) Read(p []byte) (int, error) { return l.r.Read(p[:min(len(p), l.n)]) }

// TestLocalLinkedTwice: a symbolic link to a file the walk also finds
// directly ("latest.xml" beside the run it points at) is read once, under
// the file's own name, and the link is reported; so is a second link to
// one target. A link to a file found nowhere else is read.
func TestLocalLinkedTwice(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"run-1/r.xml", "run-2/r.xml", "elsewhere/e.txt"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("<testsuite/>"), 0o644)
	}
	for link, target := range map[string]string{
		"reports/latest.xml": "../run-2/r.xml",
		"reports/e1.xml":     "../elsewhere/e.txt",
		"reports/e2.xml":     "../elsewhere/e.txt",
	} {
		os.MkdirAll(filepath.Join(dir, "reports"), 0o755)
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	srcs, skipped, err := Local([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, strings.TrimPrefix(s.Name, dir+"/"))
	}
	if want := []string{"reports/e1.xml", "run-1/r.xml", "run-2/r.xml"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("read %q, want %q", got, want)
	}
	var why []string
	for _, s := range skipped {
		why = append(why, strings.TrimPrefix(s.Path, dir+"/")+": "+strings.ReplaceAll(s.Error, dir+"/", ""))
	}
	want := []string{
		"reports/e2.xml: a symbolic link to a file read as reports/e1.xml: read once, under that name",
		"reports/latest.xml: a symbolic link to a file read as run-2/r.xml: read once, under that name",
	}
	if strings.Join(why, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(why, "\n"), strings.Join(want, "\n"))
	}
}

//go:build unix

package collect

import (
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

	// Without a workspace (the command line), links are followed: the files
	// are the user's own. FIFOs still are not read.
	got, missing, err := Local([]string{filepath.Join(ws, "results")})
	if err != nil || len(got) != 2 || len(missing) != 1 {
		t.Errorf("Local: %d sources, %v skipped, err %v; want ok.xml and link.xml, the FIFO skipped", len(got), missing, err)
	}
}

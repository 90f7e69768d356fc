//go:build unix

package collect

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flakegate/flakegate/pkg/owners"
)

// TestOwnersRefusesWhatAPullRequestCanCommit: CODEOWNERS is read from the
// checkout, which a pull request controls. A link out of the workspace (to
// the checkout's credentials, to /dev/zero), a FIFO and a file over
// GitHub's limit are refused with a reason; a link inside is followed; an
// absent file is no error.
func TestOwnersRefusesWhatAPullRequestCanCommit(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "config")
	os.WriteFile(secret, []byte("* @token-in-here\n"), 0o644)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, ws string) // makes .github/CODEOWNERS
		want  string                        // in the error; "" for none
		owner string                        // of a.py when read
	}{
		{"regular", func(t *testing.T, ws string) { write(t, ws, ".github/CODEOWNERS", "* @team\n") }, "", "@team"},
		{"absent", func(t *testing.T, ws string) {}, "", ""},
		{"link to the checkout's git config", func(t *testing.T, ws string) {
			write(t, ws, ".git/config", "* @token-in-here\n")
			link(t, "../.git/config", filepath.Join(ws, ".github/CODEOWNERS"))
		}, "a symbolic link: not followed", ""},
		{"link out", func(t *testing.T, ws string) { link(t, secret, filepath.Join(ws, ".github/CODEOWNERS")) }, "a symbolic link: not followed", ""},
		{"link to /dev/zero", func(t *testing.T, ws string) { link(t, "/dev/zero", filepath.Join(ws, ".github/CODEOWNERS")) }, "a symbolic link: not followed", ""},
		{"directory linked out", func(t *testing.T, ws string) {
			link(t, filepath.Dir(secret), filepath.Join(ws, "docs"))
			os.Rename(secret, filepath.Join(filepath.Dir(secret), "CODEOWNERS"))
		}, "a path through a symbolic link out of the workspace", ""},
		{"directory linked inside", func(t *testing.T, ws string) {
			write(t, ws, "meta/CODEOWNERS", "* @inside\n")
			link(t, "meta", filepath.Join(ws, "docs"))
		}, "", "@inside"},
		{"FIFO", func(t *testing.T, ws string) {
			os.MkdirAll(filepath.Join(ws, ".github"), 0o755)
			if err := syscall.Mkfifo(filepath.Join(ws, ".github/CODEOWNERS"), 0o644); err != nil {
				t.Skip(err)
			}
		}, "not a regular file", ""},
		{"over GitHub's limit", func(t *testing.T, ws string) {
			write(t, ws, ".github/CODEOWNERS", "* @big\n"+strings.Repeat("#\n", owners.MaxFileSize/2))
		}, "larger than 3145728 bytes", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			tc.setup(t, ws)
			f, name, err := Owners(ws)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one saying %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "token-in-here") {
					t.Errorf("the error quotes the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := strings.Join(f.Owners("a.py"), " "); got != tc.owner {
				t.Errorf("owners %q, want %q", got, tc.owner)
			}
		})
	}
	if _, err := ReadSmall(t.TempDir(), "nothing", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v, want fs.ErrNotExist", err)
	}
}

func write(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, at string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(at), 0o755)
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

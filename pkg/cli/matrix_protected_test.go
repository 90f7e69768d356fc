package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// matrix reads the diff now, so the action's protected-paths and
// protected-new-files must be expressible to matrix (and to the gate
// command it prints), or a patch the action passes is blocked by matrix.
func TestMatrixProtectedNewFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	suite := "#!/bin/sh\nmkdir -p out\necho '<testsuite name=\"s\"><testcase classname=\"c\" name=\"t1\"/></testsuite>' > out/junit.xml\n"
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(suite), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.MkdirAll(filepath.Join(repo, "tests"), 0o755)
	os.WriteFile(filepath.Join(repo, "tests", "test_new.py"), []byte("def test_new():\n    pass\n"), 0o644)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "a new test file")
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	for _, tc := range []struct {
		name  string
		extra []string
		code  int
	}{
		{"declare (the default)", nil, 1},
		{"allow", []string{"--protected-new-files", "allow"}, 0},
		{"other paths", []string{"--protected-paths", "spec/**"}, 0},
		{"no path", []string{"--protected-paths", "none"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"matrix", "--base", "base", "-k", "5", "--junit", "out/junit.xml", "--results", filepath.Join(t.TempDir(), "r")}, tc.extra...)
			m := run(t, fixedClock, append(args, "--", "sh", "run.sh")...)
			if m.code != tc.code {
				t.Fatalf("matrix: exit %d, want %d\n%s%s", m.code, tc.code, m.stdout, m.stderr)
			}
			_, line, _ := strings.Cut(m.stdout, "the same verdict from the files: flakegate ")
			line, _, _ = strings.Cut(line, "\n")
			var gargs []string
			for _, f := range strings.Fields(line) {
				gargs = append(gargs, strings.Trim(f, "'"))
			}
			if g := run(t, fixedClock, gargs...); g.code != m.code {
				t.Errorf("gate on the files: exit %d, matrix %d: %s\n%s", g.code, m.code, line, g.stdout)
			}
		})
	}
}

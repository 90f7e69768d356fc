package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestMatrixCLI runs the sequential driver on a real repository whose head
// commit breaks a test.
func TestMatrixCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	script := func(login string) string {
		return "#!/bin/sh\nmkdir -p out\nprintf '%s' '<testsuite name=\"s\"><testcase classname=\"t\" name=\"stable\"/><testcase classname=\"t\" name=\"login\"" + login + "</testsuite>' > out/junit.xml\n"
	}
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("/>")), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script(`><failure message="KeyError"/></testcase>`)), 0o755)
	git(t, repo, "commit", "-q", "-am", "break login")

	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	results := filepath.Join(t.TempDir(), "results")
	r := run(t, fixedClock, "matrix", "--base", "base", "--head", "HEAD", "-k", "3", "--junit", "out/junit.xml", "--results", results, "--", "sh", "run.sh")
	if r.code != 1 || !strings.Contains(r.stdout, "verdict: block") || !strings.Contains(r.stdout, "t::login") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*.xml"))
	if len(files) != 6 {
		t.Errorf("results = %v, want 3 base and 3 head files", files)
	}
	if r := run(t, nil, "matrix", "--base", "base", "--junit", "x.xml"); r.code != 2 || !strings.Contains(r.stderr, "a command after -- are required") {
		t.Errorf("no command: exit %d: %s", r.code, r.stderr)
	}
}

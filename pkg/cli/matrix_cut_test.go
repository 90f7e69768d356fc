package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCutGateCommandAgrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo, counter := t.TempDir(), t.TempDir()
	suite := func(side, extra string) string {
		return "#!/bin/sh\nc=" + counter + "/" + side + "\nn=$(( $(cat $c 2>/dev/null || echo 0) + 1 ))\necho $n > $c\n" + extra +
			"\nmkdir -p out\nif [ " + map[string]string{"base": "1", "head": "$n"}[side] + " -le 1 ]; then f='<failure message=\"x\"/>'; else f=''; fi\n" +
			"echo \"<testsuite name='s'><testcase classname='c' name='t1'>$f</testcase><testcase classname='c' name='t2'/></testsuite>\" > out/junit.xml\n"
	}
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(suite("base", "")), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(suite("head", `[ "$n" -eq 3 ] && exec sleep 60`)), 0o755)
	git(t, repo, "commit", "-q", "-am", "head")
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	js := filepath.Join(t.TempDir(), "m.json")
	m := run(t, fixedClock, "matrix", "--base", "base", "-k", "10", "--time-limit", "4s", "--junit", "out/junit.xml", "--json", js, "--results", filepath.Join(t.TempDir(), "r"), "--", "sh", "run.sh")
	t.Logf("matrix exit %d\n%s%s", m.code, m.stdout, m.stderr)
	_, line, _ := strings.Cut(m.stdout, "the same verdict from the files: flakegate ")
	line, _, _ = strings.Cut(line, "\n")
	var gargs []string
	for _, f := range strings.Fields(line) {
		gargs = append(gargs, strings.Trim(f, "'"))
	}
	g := run(t, fixedClock, gargs...)
	mv, _, _ := strings.Cut(m.stdout[strings.Index(m.stdout, "verdict:"):], "\n")
	gv, _, _ := strings.Cut(g.stdout[strings.Index(g.stdout, "verdict:"):], "\n")
	if g.code != m.code || mv != gv {
		t.Errorf("gate: exit %d %q, matrix %d %q\n%s", g.code, gv, m.code, mv, g.stdout)
	}
}

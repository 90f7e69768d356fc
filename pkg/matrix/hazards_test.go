package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/gate"
)

// A property violation counts as a block for the sequential driver, which
// then stops at the first look although a test is pending: the action's
// gate afterwards (which reads the PR's own body and labels, and its own
// protected-paths) gets 5 pairs instead of up to K.
func TestPropertyFindingDoesNotStopThePairs(t *testing.T) {
	base := []tcase{{"a", ""}, {"x", "[ $n -eq 1 ]"}}
	head := []tcase{{"a", ""}, {"x", "[ $n -le 3 ]"}}
	for _, sub := range []string{"src", "tests"} {
		t.Run(sub, func(t *testing.T) {
			r := newRepo(t, sub, script("base", base, ""), script("head", head, ""))
			opt := r.options(t)
			opt.Repo = filepath.Join(r.dir, sub)
			opt.K, opt.Initial = 20, 5
			rep, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d pairs, verdict %s, stop %q", sub, rep.Pairs, rep.Result.Verdict, rep.Stop)
			if rep.Pairs != 10 {
				t.Errorf("the tests/ layout stopped after %d pairs (%s) while the same runs elsewhere went on", rep.Pairs, rep.Stop)
			}
		})
	}
}

// The time limit's kill is read as the run timeout's when the run timeout
// passes while the killed run is in its grace: the cut run is kept, as a
// failed run of its side, which is what the cut was to prevent.
func TestTimeLimitCutNotReadAsRunTimeout(t *testing.T) {
	hang := `[ "$n" -eq 2 ] && { trap '' TERM; sleep 30; }`
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, hang))
	opt := r.options(t)
	opt.K, opt.Initial = 2, 2
	opt.TimeLimit = 3 * time.Second
	opt.RunTimeout = 4 * time.Second // ends inside the grace after the limit's SIGTERM
	opt.Grace = 5 * time.Second
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("%v (stop %q)", err, rep.Stop)
	}
	for _, run := range rep.Runs {
		if run.Failure != "" {
			t.Errorf("%s kept as a failed run: %s", run.Name(), run.Failure)
		}
	}
	if rep.Pairs != 1 || !strings.Contains(rep.Stop, "the time limit (3s) ended while head run 2 was running") {
		t.Errorf("pairs %d, stop %q: the time limit's cut is not said", rep.Pairs, rep.Stop)
	}
}

// A test that leaves a plain background process (same session, same
// group: killed by the group's kill) is said to have left a process "in a
// session of its own (setsid)".
func TestGroupMemberNotCountedAsSetsid(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, "sleep 30 >/dev/null 2>&1 &"), script("head", []tcase{{"a", ""}}, "sleep 30 >/dev/null 2>&1 &"))
	opt := r.options(t)
	opt.K, opt.Initial = 5, 5
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, note := range rep.Notes {
		if strings.Contains(note, "session of its own") {
			n++
			t.Logf("note: %s", note)
		}
	}
	if n > 0 {
		t.Errorf("%d of 10 runs said to leave a setsid process; none did", n)
	}
	if _, err := os.Stat(r.counters); err != nil {
		t.Fatal(err)
	}
}

// Two Runs at once (the package's API allows it; the comments claim the
// other Run's commands are safe): one Run's reap kills the daemon the
// other Run's running test started and still uses.
func TestConcurrentRunSparesOthersDaemon(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	// The daemon's parent exits at once, so it comes to flakegate while
	// the test goes on using it for 3 s.
	uses := `sh -c 'setsid sh -c "echo \$\$ >> ` + pids + `; exec sleep 300" </dev/null >/dev/null 2>&1 &'
sleep 0.3; d=$(tail -n1 ` + pids + `); i=0
while [ $i -lt 30 ]; do kill -0 $d 2>/dev/null || { echo "daemon gone" >&2; exit 3; }; sleep 0.1; i=$((i+1)); done
kill $d`
	a := newRepo(t, "", script("base", []tcase{{"a", ""}}, uses), script("head", []tcase{{"a", ""}}, uses))
	b := newRepo(t, "", script("base", []tcase{{"b", ""}}, "sleep 0.2"), script("head", []tcase{{"b", ""}}, "sleep 0.2"))
	optA, optB := a.options(t), b.options(t)
	optA.K, optA.Initial, optB.K, optB.Initial = 1, 1, 10, 10
	if os.Getenv("FLAKEGATE_REVIEW_ALONE") != "" {
		optB.K, optB.Initial = 1, 1
		optB.Command = []string{"true"}
	}
	errB := make(chan error, 1)
	go func() { _, err := Run(context.Background(), optB); errB <- err }()
	repA, err := Run(context.Background(), optA)
	if err != nil {
		t.Fatal(err)
	}
	<-errB
	for _, run := range repA.Runs {
		if run.Failure != "" {
			t.Errorf("%s failed: %s", run.Name(), run.Failure)
		}
	}
	b2, _ := os.ReadFile(pids)
	for _, f := range strings.Fields(string(b2)) {
		if p, _ := strconv.Atoi(f); p > 0 {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// The diff is read "whatever the user's git configuration", but
// diff.submodule is not overridden: with diff=log the submodule's change
// is no file at all, and with diff=diff the submodule's own files are
// listed as the patch's (a skip marker inside it blocks), where a pull
// request's files show the pointer alone.
func TestDiffSubmoduleConfig(t *testing.T) {
	root := t.TempDir()
	sub, top := filepath.Join(root, "sub"), filepath.Join(root, "top")
	for _, d := range []string{sub, top} {
		os.MkdirAll(d, 0o755)
		gitT(t, d, "init", "-q")
	}
	os.MkdirAll(filepath.Join(sub, "tests"), 0o755)
	os.WriteFile(filepath.Join(sub, "tests", "test_a.py"), []byte("def test_a(): pass\n"), 0o644)
	gitT(t, sub, "add", "-A")
	gitT(t, sub, "commit", "-q", "-m", "s1")
	os.WriteFile(filepath.Join(top, "a.txt"), []byte("x\n"), 0o644)
	gitT(t, top, "add", "-A")
	gitT(t, top, "commit", "-q", "-m", "m1")
	gitT(t, top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "tests/fixtures")
	gitT(t, top, "commit", "-q", "-m", "m2")
	base := gitT(t, top, "rev-parse", "HEAD")
	inner := filepath.Join(top, "tests", "fixtures")
	os.WriteFile(filepath.Join(inner, "tests", "test_b.py"), []byte("import pytest\n@pytest.mark.skip\ndef test_b(): pass\n"), 0o644)
	gitT(t, inner, "add", "-A")
	gitT(t, inner, "commit", "-q", "-m", "s2")
	gitT(t, top, "add", "tests/fixtures")
	gitT(t, top, "commit", "-q", "-m", "m3")
	head := gitT(t, top, "rev-parse", "HEAD")
	for _, mode := range []string{"short", "log", "diff"} {
		gitT(t, top, "config", "diff.submodule", mode)
		text, err := checkout{top: top}.diff(context.Background(), base, head)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := gate.ParseUnifiedDiff(text)
		if err != nil {
			t.Errorf("diff.submodule=%s: %v", mode, err)
			continue
		}
		var paths []string
		for _, c := range ch {
			paths = append(paths, c.Path)
		}
		if len(paths) != 1 || paths[0] != "tests/fixtures" {
			t.Errorf("diff.submodule=%s: files %v, want [tests/fixtures] (the pull request's view)", mode, paths)
		}
	}
}

// Past the cap, git is stopped, not read to the end into memory.
func TestDiffCapStopsGit(t *testing.T) {
	top := t.TempDir()
	gitT(t, top, "init", "-q")
	os.WriteFile(filepath.Join(top, "a.txt"), []byte("a\n"), 0o644)
	gitT(t, top, "add", "-A")
	gitT(t, top, "commit", "-q", "-m", "1")
	base := gitT(t, top, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(top, "big.txt"), []byte(strings.Repeat("some line of text\n", 1<<16)), 0o644)
	gitT(t, top, "add", "-A")
	gitT(t, top, "commit", "-q", "-m", "2")
	head := gitT(t, top, "rev-parse", "HEAD")
	args := []string{"diff", "--no-color", base + "..." + head}
	if _, err := gitCapped(context.Background(), top, 64<<10, args...); err == nil || !strings.Contains(err.Error(), "over the cap of 65536 bytes") {
		t.Errorf("capped diff: err %v, want over the cap", err)
	}
	if out, err := gitCapped(context.Background(), top, 0, args...); err != nil || len(out) < 1<<20 {
		t.Errorf("uncapped diff: %d bytes, err %v", len(out), err)
	}
}

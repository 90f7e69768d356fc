package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/pkg/model"
)

// git runs git in dir and returns its trimmed standard output. The error
// carries git's standard error, which names what went wrong.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := gitRaw(ctx, dir, args...)
	return strings.TrimSpace(out), err
}

// gitRaw is git with its standard output as written: a diff's last line
// may be a context line of one space.
func gitRaw(ctx context.Context, dir string, args ...string) (string, error) {
	return gitCapped(ctx, dir, 0, args...)
}

// errOverCap: git's output passed the cap gitCapped was given.
var errOverCap = errors.New("over the cap")

// capped is a buffer that refuses to grow past max (0: no cap): git, its
// output refused, stops on a broken pipe instead of filling memory.
// (No bytes.Buffer embedded: io.Copy would use its ReadFrom, past Write.)
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.max > 0 && c.buf.Len()+len(p) > c.max {
		c.over = true
		return 0, errOverCap
	}
	return c.buf.Write(p)
}

// gitCapped is gitRaw with its output bounded by max bytes (0: none).
func gitCapped(ctx context.Context, dir string, max int, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	// Inside a git hook (pre-commit, say), git sets GIT_INDEX_FILE to a path
	// relative to the hook's directory: taken from the worktrees the driver
	// makes, it names no index, and `git worktree add` fails. The driver's
	// own git works on the repository's default index.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_INDEX_FILE=") })
	var stderr bytes.Buffer
	stdout := capped{max: max}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if stdout.over { // git, its output refused, ends on a broken pipe
			return "", fmt.Errorf("over the cap of %d bytes", max)
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return stdout.buf.String(), nil
}

// checkout is the repository the driver runs in.
type checkout struct {
	top    string // the working tree's top-level directory
	prefix string // Options.Repo relative to top, "" at the top
}

// openRepo finds the working tree that dir belongs to.
func openRepo(ctx context.Context, dir string) (checkout, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return checkout{}, fmt.Errorf("repository %s: %w", dir, err)
	}
	top, prefix, _ := strings.Cut(out, "\n")
	if top == "" {
		return checkout{}, fmt.Errorf("repository %s: not inside a git working tree", dir)
	}
	return checkout{top: top, prefix: filepath.FromSlash(strings.TrimSuffix(strings.TrimSpace(prefix), "/"))}, nil
}

// resolve turns a revision into the commit's full SHA.
func (c checkout) resolve(ctx context.Context, flag, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%s %q: a revision may not start with '-'", flag, rev)
	}
	sha, err := git(ctx, c.top, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil || sha == "" {
		return "", fmt.Errorf("%s %q: not a commit in %s", flag, rev, c.top)
	}
	return sha, nil
}

// mergeBase returns the best common ancestor of a and b, and how many
// commits b has that it does not; ok is false when they have none (unrelated
// histories, or a shallow clone that lacks it).
func (c checkout) mergeBase(ctx context.Context, a, b string) (sha string, ahead int, ok bool) {
	sha, err := git(ctx, c.top, "merge-base", a, b)
	if err != nil || sha == "" {
		return "", 0, false
	}
	n, err := git(ctx, c.top, "rev-list", "--count", sha+".."+b)
	if err != nil {
		return "", 0, false
	}
	ahead, err = strconv.Atoi(n)
	return sha, ahead, err == nil
}

// dirty reports whether the working tree has uncommitted changes to tracked
// files.
func (c checkout) dirty(ctx context.Context) bool {
	out, err := git(ctx, c.top, "status", "--porcelain", "--untracked-files=no")
	return err == nil && out != ""
}

// untracked counts the files of the working tree that git does not track
// and does not ignore: a worktree holds committed files only, so they are
// not tested.
func (c checkout) untracked(ctx context.Context) int {
	out, err := git(ctx, c.top, "ls-files", "--others", "--exclude-standard")
	if err != nil || out == "" {
		return 0
	}
	return strings.Count(out, "\n") + 1
}

// depDirs are directories where package managers install a project's
// dependencies inside its checkout.
var depDirs = []string{"node_modules", ".venv", "venv", "vendor/bundle", ".bundle", "bower_components", ".yarn/cache"}

// ignoredDeps lists the depDirs of the directory the command runs in that
// exist and that git ignores: a worktree does not have them.
func (c checkout) ignoredDeps(ctx context.Context) []string {
	var out []string
	for _, d := range depDirs {
		rel := filepath.Join(c.prefix, d)
		if fi, err := os.Stat(filepath.Join(c.top, rel)); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := git(ctx, c.top, "check-ignore", "-q", "--", filepath.ToSlash(rel)); err == nil {
			out = append(out, rel+"/")
		}
	}
	return out
}

// submodules reports whether sha declares submodules (.gitmodules): a
// worktree's are not initialised, so their tests are not run.
func (c checkout) submodules(ctx context.Context, sha string) bool {
	_, err := git(ctx, c.top, "cat-file", "-e", sha+":.gitmodules")
	return err == nil
}

// addWorktree checks sha out, detached, into the new directory dir.
func (c checkout) addWorktree(ctx context.Context, dir, sha string) error {
	if _, err := git(ctx, c.top, "worktree", "add", "--detach", "--quiet", dir, sha); err != nil {
		return fmt.Errorf("worktree %s at %s: %w", dir, model.ShortSHA(sha), err)
	}
	return nil
}

// removeWorktree removes a worktree that addWorktree made, untracked files
// and all. When git refuses (a worktree with submodules, say), the
// directory is deleted and git's stale entry pruned.
func (c checkout) removeWorktree(ctx context.Context, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil // never made
	}
	_, err := git(ctx, c.top, "worktree", "remove", "--force", dir)
	if err == nil {
		return nil
	}
	if rmErr := os.RemoveAll(dir); rmErr != nil {
		return fmt.Errorf("worktree %s: %w", dir, errors.Join(err, rmErr))
	}
	if _, pruneErr := git(ctx, c.top, "worktree", "prune"); pruneErr != nil {
		return fmt.Errorf("worktree %s: %w", dir, errors.Join(err, pruneErr))
	}
	return nil
}

// maxDiff bounds the diff read for the property checks: past it (a
// vendored tree, generated files), the checks do not run, saying so.
const maxDiff = 64 << 20

// diff is what head changes since it left base, as a pull request shows
// it (git diff base...head), in the form the gate parses whatever the
// user's git configuration (prefixes, colours, external diff drivers).
//
// A submodule is its pointer, as a pull request's files show it, whatever
// diff.submodule (log: no file at all; diff: the submodule's own files
// listed as the patch's) and diff.ignoreSubmodules say. Past maxDiff git
// is stopped rather than read to the end.
func (c checkout) diff(ctx context.Context, base, head string) (string, error) {
	return gitCapped(ctx, c.top, maxDiff, "-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "--no-textconv",
		"--submodule=short", "--ignore-submodules=none", "--src-prefix=a/", "--dst-prefix=b/", "-M", base+"..."+head)
}

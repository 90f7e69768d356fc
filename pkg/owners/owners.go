// Package owners reads a CODEOWNERS file and says who owns a path, as
// GitHub does: the last matching rule wins, patterns follow .gitignore
// rules, a rule with no owners leaves a path unowned, and a line GitHub
// does not accept is skipped.
package owners

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"

	"github.com/flakegate/flakegate/pkg/internal/glob"
)

// Paths GitHub looks for CODEOWNERS in, in order.
var Paths = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// File is a parsed CODEOWNERS file.
type File struct {
	rules   []rule
	skipped []string
}

// Skipped names each line whose pattern GitHub does not accept, with the
// reason. GitHub skips such a line and keeps the others.
func (f *File) Skipped() []string {
	if f == nil {
		return nil
	}
	return f.skipped
}

type rule struct {
	pattern string
	owners  []string
}

// Parse reads CODEOWNERS content. A line whose pattern GitHub does not
// accept is skipped, as GitHub skips it, and named in Skipped; the error
// is for content that cannot be read at all (a line over 1 MiB).
func Parse(content string) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(strings.NewReader(content))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		for i, fl := range fields {
			if strings.HasPrefix(fl, "#") { // a comment, to the end of the line
				fields = fields[:i]
				break
			}
		}
		if len(fields) == 0 {
			continue
		}
		if err := check(fields[0]); err != nil {
			f.skipped = append(f.skipped, fmt.Sprintf("line %d: pattern %q: %v", n, fields[0], err))
			continue
		}
		f.rules = append(f.rules, rule{pattern: fields[0], owners: fields[1:]})
	}
	return f, sc.Err()
}

// check refuses what GitHub's CODEOWNERS does not support.
func check(p string) error {
	if strings.HasPrefix(p, "!") || strings.Contains(p, "[") {
		return fmt.Errorf("negation and character ranges are not supported by GitHub")
	}
	return glob.Validate(p)
}

// codeowners matches as GitHub's CODEOWNERS: a pattern naming a directory
// owns everything under it, and "docs/*" only the files directly in docs.
var ownerRules = glob.Repo{Under: true}

// Owners returns the owners of a repository-relative path, or nil.
func (f *File) Owners(path string) []string {
	if f == nil || path == "" {
		return nil
	}
	path = strings.TrimPrefix(strings.ReplaceAll(path, `\`, "/"), "./")
	for i := len(f.rules) - 1; i >= 0; i-- {
		if ownerRules.MatchRepo(f.rules[i].pattern, path) {
			return f.rules[i].owners
		}
	}
	return nil
}

// MaxFileSize is GitHub's limit for a CODEOWNERS file: over it, GitHub
// reads none of it.
const MaxFileSize = 3 << 20

// Find reads the first CODEOWNERS file of Paths under root with read, which
// is given the path relative to root. It returns nil and no error when
// there is none (read's errors.Is(err, fs.ErrNotExist) in every place); a
// file that is there but cannot be read is an error, so that owners are
// not left out without a word.
func Find(root string, read func(string) ([]byte, error)) (*File, string, error) {
	for _, p := range Paths {
		name := strings.TrimSuffix(root, "/") + "/" + p
		if root == "" {
			name = p
		}
		b, err := read(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, name, err
		}
		f, err := Parse(string(b))
		return f, name, err
	}
	return nil, "", nil
}

// Annotate sets the owners of every test whose file is known, its path
// made relative to the checkout's root.
func (f *File) Annotate(tests []score.Test, co model.Checkout) {
	if f == nil {
		return
	}
	for i := range tests {
		if t := &tests[i]; t.File != "" {
			t.Owners = f.Owners(co.RepoPath(t.File))
		}
	}
}

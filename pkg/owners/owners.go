// Package owners reads a CODEOWNERS file and says who owns a path, as
// GitHub does: the last matching rule wins, patterns follow .gitignore
// rules, and a rule with no owners leaves a path unowned.
package owners

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"

	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"
)

// Paths GitHub looks for CODEOWNERS in, in order.
var Paths = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// File is a parsed CODEOWNERS file.
type File struct {
	rules []rule
}

type rule struct {
	re     *regexp.Regexp
	owners []string
}

// Parse reads CODEOWNERS content. A pattern that cannot be read is an
// error naming its line.
func Parse(content string) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(strings.NewReader(content))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		re, err := compile(fields[0])
		if err != nil {
			return nil, fmt.Errorf("CODEOWNERS line %d: pattern %q: %w", n, fields[0], err)
		}
		f.rules = append(f.rules, rule{re: re, owners: fields[1:]})
	}
	return f, sc.Err()
}

// compile turns a CODEOWNERS pattern into a regular expression over a
// repository-relative path with forward slashes.
func compile(p string) (*regexp.Regexp, error) {
	if strings.HasPrefix(p, "!") || strings.Contains(p, "[") {
		return nil, fmt.Errorf("negation and character ranges are not supported by GitHub")
	}
	dir := strings.HasSuffix(p, "/")
	p = strings.TrimSuffix(p, "/")
	// "docs/*" owns the files directly in docs, not those below (GitHub's
	// documented exception to .gitignore).
	oneLevel := strings.HasSuffix(p, "/*") && !strings.HasSuffix(p, "**/*")
	anchored := strings.HasPrefix(p, "/") || strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			i++
			if i+1 < len(p) && p[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?")
			} else {
				b.WriteString(".*")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	switch {
	case dir:
		b.WriteString("/.*$")
	case oneLevel:
		b.WriteString("$")
	default:
		// A pattern naming a directory owns everything under it.
		b.WriteString("(?:/.*)?$")
	}
	return regexp.Compile(b.String())
}

// Owners returns the owners of a repository-relative path, or nil.
func (f *File) Owners(path string) []string {
	if f == nil || path == "" {
		return nil
	}
	path = strings.TrimPrefix(strings.ReplaceAll(path, `\`, "/"), "./")
	for i := len(f.rules) - 1; i >= 0; i-- {
		if f.rules[i].re.MatchString(path) {
			return f.rules[i].owners
		}
	}
	return nil
}

// Find reads the first CODEOWNERS file of Paths under root with read (for
// example os.ReadFile). It returns nil and no error when there is none.
func Find(root string, read func(string) ([]byte, error)) (*File, string, error) {
	for _, p := range Paths {
		name := strings.TrimSuffix(root, "/") + "/" + p
		if root == "" {
			name = p
		}
		b, err := read(name)
		if err != nil {
			continue // absent or unreadable: try the next place
		}
		f, err := Parse(string(b))
		return f, name, err
	}
	return nil, "", nil
}

// Annotate sets the owners of every test whose file is known. root is the
// repository's checkout, to which absolute file paths are made relative.
func (f *File) Annotate(tests []score.Test, root string) {
	if f == nil {
		return
	}
	for i := range tests {
		if t := &tests[i]; t.File != "" {
			t.Owners = f.Owners(model.RepoPath(t.File, root))
		}
	}
}

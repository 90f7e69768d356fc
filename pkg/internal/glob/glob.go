// Package glob is flakegate's one path matcher, on doublestar: "*", "?"
// and "[…]" match within one path element, "**" any number of elements
// (none included), "{a,b}" either. Paths and patterns use forward slashes.
//
// Repository patterns (the gate's protected paths, CODEOWNERS) follow
// .gitignore: a pattern without a slash (a trailing one aside) matches at
// any depth, a leading "/" anchors it at the root, and a trailing "/" means
// a directory and everything under it.
package glob

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Validate reports a pattern that cannot match anything because it is
// malformed, naming what is accepted.
func Validate(pattern string) error {
	if strings.TrimSpace(pattern) == "" {
		return fmt.Errorf("empty pattern")
	}
	if !doublestar.ValidatePattern(strings.TrimPrefix(pattern, "/")) {
		return fmt.Errorf("malformed glob %q: want *, ?, [class], {a,b} or ** (any directories)", pattern)
	}
	return nil
}

// Match reports whether a slash-separated path matches pattern, both taken
// as they are ("a/*.xml" does not match "b/a/x.xml"). A malformed pattern
// matches nothing.
func Match(pattern, p string) bool {
	ok, err := doublestar.Match(pattern, p)
	return err == nil && ok
}

// Repo describes how a repository pattern matches.
type Repo struct {
	// Under: GitHub's CODEOWNERS rules. A pattern that matches a
	// directory matches everything under it too ("docs" owns
	// "docs/a.md"), except one ending in "/*", which matches one level
	// only ("docs/*", and "/*" the files at the root). A pattern naming
	// a directory ("docs/", "docs/**") owns what is under it, not a file
	// of that name. Without Under, such a pattern matches that name too
	// (a PR's change to a submodule "tests" is under "tests/**").
	Under bool
}

// MatchRepo reports whether a repository path matches a .gitignore-style
// pattern.
func (o Repo) MatchRepo(pattern, p string) bool {
	p = strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "./")
	dir := strings.HasSuffix(pattern, "/")
	pattern = strings.TrimPrefix(strings.TrimSuffix(pattern, "/"), "./")
	oneLevel := strings.HasSuffix(pattern, "/*") && !strings.HasSuffix(pattern, "**/*")
	anchored := strings.Contains(pattern, "/")
	pattern = strings.TrimPrefix(pattern, "/")
	if !anchored {
		pattern = "**/" + pattern
	}
	under := "/**" // what is under a directory, itself included
	if o.Under {
		under = "/**/*" // at least one element below it
		if !dir && (pattern == "**" || strings.HasSuffix(pattern, "/**")) {
			pattern += "/*"
		}
	}
	switch {
	case dir:
		return Match(pattern+under, p)
	case o.Under && !oneLevel:
		return Match(pattern, p) || Match(pattern+under, p)
	}
	return Match(pattern, p)
}

// SplitList splits a list of patterns on newlines and on commas outside
// "{…}" and "[…]", trims each and drops blank ones: "a/{x,y}.xml, b/*.xml"
// is two patterns. A "\" escapes the character after it, as in a pattern.
func SplitList(s string) []string {
	var out []string
	add := func(f string) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	braces, class, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '{':
			braces++
		case c == '}' && braces > 0:
			braces--
		case c == '\n', c == ',' && braces == 0:
			add(s[start:i])
			start, braces = i+1, 0
		}
	}
	add(s[start:])
	return out
}

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
	// Under: a pattern that matches a directory matches everything under
	// it too ("docs" owns "docs/a.md"), except a pattern ending in "/*",
	// which matches one level only (GitHub's CODEOWNERS rule).
	Under bool
}

// MatchRepo reports whether a repository path matches a .gitignore-style
// pattern.
func (o Repo) MatchRepo(pattern, p string) bool {
	p = strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "./")
	dir := strings.HasSuffix(pattern, "/")
	pattern = strings.TrimPrefix(strings.TrimSuffix(pattern, "/"), "./")
	anchored := strings.Contains(pattern, "/")
	pattern = strings.TrimPrefix(pattern, "/")
	if !anchored {
		pattern = "**/" + pattern
	}
	oneLevel := strings.HasSuffix(pattern, "/*") && !strings.HasSuffix(pattern, "**/*")
	switch {
	case dir:
		return Match(pattern+"/**", p)
	case o.Under && !oneLevel:
		return Match(pattern, p) || Match(pattern+"/**", p)
	}
	return Match(pattern, p)
}

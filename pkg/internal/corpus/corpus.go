// Package corpus finds the JUnit conformance corpus for tests: the shared
// folder beside the project (../shared/conformance/junit), which is the
// corpus's home, when it is there; else the copy in
// fixtures/conformance/junit, so that a clone alone (a contributor's, the
// project's own CI on GitHub) runs every test. TestCopyMatchesShared says
// when the copy falls behind.
package corpus

import (
	"os"
	"path/filepath"
)

// Shared and Copy are the corpus's two places, absolute.
var Shared, Copy = places()

func places() (shared, copy string) {
	root, _ := os.Getwd() // a test runs in its package's directory
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return filepath.Join(root, "..", "shared", "conformance", "junit"), filepath.Join(root, "fixtures", "conformance", "junit")
}

// Dir is the corpus the tests read.
func Dir() string {
	if fi, err := os.Stat(filepath.Join(Shared, "expected.json")); err == nil && fi.Mode().IsRegular() {
		return Shared
	}
	return Copy
}

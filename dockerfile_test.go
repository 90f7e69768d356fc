package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// versionSymbol is the variable the build stamps with the release version.
const versionSymbol = "github.com/flakegate/flakegate/pkg/cli.Version"

// dockerBuild is the Dockerfile's go build command: its environment and
// arguments, with the Dockerfile's variables still in them.
type dockerBuild struct {
	Env  []string // NAME=value, as written
	Args []string // after "go"
	Line string
}

// readDockerBuild finds the one RUN line of the Dockerfile that runs
// go build and splits it as the shell would (words, double quotes).
func readDockerBuild(t *testing.T) dockerBuild {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build") {
			found = append(found, strings.TrimPrefix(line, "RUN "))
		}
	}
	if len(found) != 1 {
		t.Fatalf("Dockerfile: want exactly one RUN line with go build, found %d", len(found))
	}
	words, err := shellWords(found[0])
	if err != nil {
		t.Fatalf("Dockerfile build line: %v", err)
	}
	var d dockerBuild
	d.Line = found[0]
	for i, w := range words {
		if w == "go" {
			d.Args = words[i+1:]
			break
		}
		if !regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(w) {
			t.Fatalf("Dockerfile build line: %q before go is not an assignment", w)
		}
		d.Env = append(d.Env, w)
	}
	if len(d.Args) == 0 || d.Args[0] != "build" {
		t.Fatalf("Dockerfile build line does not run go build: %q", found[0])
	}
	return d
}

// expand replaces $NAME and ${NAME} from vars; an unknown name fails.
func expand(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return os.Expand(s, func(name string) string {
		v, ok := vars[name]
		if !ok {
			t.Fatalf("Dockerfile build line uses $%s, which the test does not know", name)
		}
		return v
	})
}

// shellWords splits a command line into words: blanks separate, double and
// single quotes group. Anything else a shell would do (;, |, backslashes,
// $(...)) is refused, so that the test never runs less than the Dockerfile.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune(";|&<>\\`()", r):
			return nil, fmt.Errorf("%q: shell syntax %q is not supported here", s, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unterminated quote", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	got, err := shellWords(`CGO_ENABLED=0 go build -ldflags "-s -w -X a.b=$V" -o /out/x .`)
	want := []string{"CGO_ENABLED=0", "go", "build", "-ldflags", "-s -w -X a.b=$V", "-o", "/out/x", "."}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shellWords = %q, %v", got, err)
	}
	for _, bad := range []string{`go build && rm -rf /`, `go build "open`, `go build $(x)`} {
		if _, err := shellWords(bad); err == nil {
			t.Errorf("shellWords(%q): no error", bad)
		}
	}
}

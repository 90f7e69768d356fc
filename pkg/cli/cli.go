// Package cli is flakegate's command line: analyze, gate, ledger, version,
// and, with no subcommand inside GitHub Actions, the action itself. Main is
// the seam main.go calls; everything it needs comes in as parameters.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Version is set at build time with -ldflags "-X ...cli.Version=v1.2.3".
var Version = "dev"

// Env is what Main needs from the process.
type Env struct {
	Args   []string // without the program name
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
	// Action runs the GitHub Action when there is no subcommand and
	// GITHUB_ACTIONS is true. Nil means the action is not available.
	Action func(ctx context.Context) int

	// rawStderr is Stderr before the guard: the matrix driver's test
	// command writes there, as it would without flakegate.
	rawStderr io.Writer
}

const usage = `flakegate tells flaky tests from tests broken by a patch.

Usage:
  flakegate analyze [--threshold 0.1] [--min-commits 5] [--codeowners FILE] [--format text|json|csv|md|html] [--out DIR] [--json FILE] PATH...
  flakegate gate --base GLOB --head GLOB [--history GLOB] [--ledger FILE] [--diff FILE] [--json FILE] [--alpha-pr 0.05] [--max-runs 20] [--on-inconclusive neutral|fail|pass]
  flakegate matrix --base REV [--head REV] [-k MAX] --junit PATH -- CMD...
  flakegate ledger verify [FILE]
  flakegate demo [-out DIR]
  flakegate version

With no command and GITHUB_ACTIONS=true, flakegate runs as the GitHub Action.
Run "flakegate COMMAND -h" for a command's flags.
`

// Main runs one command and returns the process exit code: 0 for success,
// 1 for a blocking verdict or a failure (the message says which), 2 for
// bad usage.
func Main(ctx context.Context, env Env) int {
	if len(env.Args) == 0 {
		if env.Getenv("GITHUB_ACTIONS") == "true" && env.Action != nil {
			return env.Action(ctx)
		}
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	// Everything a command prints passes the guard (guard.go).
	out, errw := newGuard(env.Stdout), newGuard(env.Stderr)
	defer out.flush()
	defer errw.flush()
	env.rawStderr = env.Stderr
	env.Stdout, env.Stderr = out, errw
	cmd, args := env.Args[0], env.Args[1:]
	switch cmd {
	case "analyze":
		return analyze(ctx, env, args)
	case "gate":
		return gateCmd(ctx, env, args)
	case "ledger":
		return ledgerCmd(env, args)
	case "matrix":
		return matrixCmd(ctx, env, args)
	case "demo":
		return demoCmd(ctx, env, args)
	case "version", "--version":
		fmt.Fprintf(env.Stdout, "flakegate %s\n", Version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	}
	fmt.Fprintf(env.Stderr, "flakegate: unknown command %q: accepted commands are analyze, gate, matrix, ledger, version\n\n%s", cmd, usage)
	return 2
}

// parseInterspersed parses flags that may come before, between or after
// positional arguments, as users type them.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// choice is a flag whose value must be one of a set.
type choice struct {
	value   string
	allowed []string
}

func (c *choice) String() string { return c.value }

func (c *choice) Set(s string) error {
	for _, a := range c.allowed {
		if s == a {
			c.value = s
			return nil
		}
	}
	return fmt.Errorf("accepted values are %s", strings.Join(c.allowed, ", "))
}

// usageError marks bad command-line input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

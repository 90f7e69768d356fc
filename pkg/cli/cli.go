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
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/pkg/internal/heapgoal"
)

// Version is set at build time with -ldflags "-X ...cli.Version=v1.2.3".
var Version = "dev"

// version is Version as stamped by the release build, else the module
// version go install recorded (go install github.com/flakegate/flakegate@v1.2.3).
func version() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Version
}

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
  flakegate demo [--out DIR]
      the weekly report and the PR gate on a bundled scenario, against a fake
      GitHub in this process; writes the comment, summaries and report to DIR
  flakegate analyze [--threshold 0.1] [--min-commits 5] [--infra-threshold 0.5]
      [--format text|json|csv|md|html] [--out DIR] [--json FILE] [--codeowners FILE]
      [--commit-sha SHA] [--run-id ID] [--workers N] PATH...
  flakegate gate --base GLOB --head GLOB [--history GLOB] [--ledger FILE]
      [--base-ledger FILE] [--diff FILE] [--pr-body FILE] [--label LABEL]
      [--protected-paths GLOBS] [--protected-new-files declare|allow] [--alpha-pr 0.05]
      [--max-runs 20] [--first-look 1]
      [--on-inconclusive neutral|fail|pass] [--p1 0.9] [--alpha 0.05] [--beta 0.05]
      [--expired-ledger fail|warn] [--json FILE]
  flakegate matrix --base REV [--head REV] [--exact-base] [-k 20] [--initial 5] --junit PATH
      [--results DIR] [--history GLOB] [--pr-body FILE] [--label L]...
      [--protected-paths GLOBS] [--protected-new-files declare|allow] [--alpha-pr 0.05] [--json FILE]
      [--on-inconclusive neutral|fail|pass] [--p1 0.9] [--alpha 0.05] [--beta 0.05]
      [--run-timeout DURATION] [--time-limit DURATION] [--block-exit-code 1] -- CMD...
  flakegate ledger verify [FILE]
  flakegate version

With no command and GITHUB_ACTIONS=true, flakegate runs as the GitHub Action.
Run "flakegate COMMAND -h" for a command's flags. Exit status: 0 pass, 1 block
or failure, 2 bad usage.
`

// commands are the subcommands; each returns an error that Main maps to
// the exit code.
var commands = map[string]func(ctx context.Context, env Env, args []string) error{
	"analyze": analyze,
	"gate":    gateCmd,
	"matrix":  matrixCmd,
	"ledger":  func(_ context.Context, env Env, args []string) error { return ledgerCmd(env, args) },
	"demo":    demoCmd,
}

// heapFloor is the heap a command may reach before the garbage collector
// first runs (heapgoal): a history of 45 MB is read without collecting,
// and the peak stays below 64 MiB.
const heapFloor = 48 << 20

// Main runs one command and returns the process exit code: 0 for success
// (and for -h), 1 for a blocking verdict or a failure (the message says
// which), 2 for bad usage.
func Main(ctx context.Context, env Env) int {
	heapgoal.Start(heapFloor, env.Getenv)
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
	name, args := env.Args[0], env.Args[1:]
	switch name {
	case "version", "--version":
		if len(args) > 0 {
			fmt.Fprintf(env.Stderr, "flakegate version: unexpected argument %q: the command takes none\n", args[0])
			return 2
		}
		fmt.Fprintf(env.Stdout, "flakegate %s\n", version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "flakegate: unknown command %q: accepted commands are analyze, gate, matrix, ledger, demo, version\n\n%s", name, usage)
		return 2
	}
	return exit(env, name, cmd(ctx, env, args))
}

// exit maps a command's error to the exit code, and prints it once.
func exit(env Env, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code := 1
	var e *exitError
	if errors.As(err, &e) {
		code = e.code
		if e.err == nil {
			return code // already said: the flag package's message, or a printed verdict
		}
	}
	fmt.Fprintf(env.Stderr, "flakegate %s: %v\n", name, err)
	return code
}

// exitError is an error with its exit code; a nil err has been reported.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return "exit status " + strconv.Itoa(e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errBlocked is a blocking verdict, which the command printed: exit 1.
var errBlocked = &exitError{code: 1}

// usagef is bad command-line input: exit 2.
func usagef(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// flagError is a parse error the flag package printed with the usage, or
// flag.ErrHelp after printing the help to stdout.
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &exitError{code: 2}
}

// newFlags is a command's flag set: help asked for (-h, -help, --help
// before any "--") goes to stdout, errors and their usage to stderr.
func newFlags(name string, env Env, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelp(a) {
			fs.SetOutput(env.Stdout)
		}
	}
	return fs
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
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

// count is an int flag with a minimum, whose zero means def (shown as the
// default).
type count struct {
	v        *int
	min, max int // max 0: no bound
	what     string
	def      int
}

func (c count) String() string {
	if c.v == nil || *c.v == 0 {
		return strconv.Itoa(c.def)
	}
	return strconv.Itoa(*c.v)
}

func (c count) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return fmt.Errorf("want a whole number: %s", c.what)
	case n < c.min || c.max > 0 && n > c.max:
		return errors.New(c.what)
	}
	*c.v = n
	return nil
}

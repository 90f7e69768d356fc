// Command flakegate tells flaky tests from tests broken by a patch. It is a
// GitHub Action and a command-line tool; see README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/flakegate/flakegate/pkg/action"
	"github.com/flakegate/flakegate/pkg/cli"
	"github.com/flakegate/flakegate/pkg/matrix"
)

// interrupted is the cancellation cause a signal gives.
type interrupted struct{ syscall.Signal }

func (s interrupted) Error() string { return s.Signal.String() }

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancelCause(context.Background())
	// The first signal (a hang-up too: a closed terminal, a dropped ssh
	// session) cancels the work, which then stops at its next check and
	// cleans up (matrix's worktrees and test processes); a second one ends
	// the process at once, as the runner's cancel (SIGINT, then SIGTERM)
	// expects, killing the test commands matrix runs in sessions of their
	// own, which the signal does not reach.
	go func() {
		s := <-sigs
		cancel(interrupted{s.(syscall.Signal)})
		s = <-sigs
		for _, c := range matrix.KillRunning() {
			fmt.Fprintf(os.Stderr, "flakegate: interrupted again: worktrees left; remove them with: %s\n", c)
		}
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	code := cli.Main(ctx, cli.Env{Args: os.Args[1:], Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr,
		Action: func(ctx context.Context) int {
			return action.Run(ctx, action.Env{Getenv: os.Getenv, Stdout: os.Stdout})
		}})
	if s, ok := context.Cause(ctx).(interrupted); ok && code != 0 {
		code = 128 + int(s.Signal) // as a shell reports a run a signal ended
	}
	os.Exit(code)
}

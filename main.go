// Command flakegate tells flaky tests from tests broken by a patch. It is a
// GitHub Action and a command-line tool; see README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/flakegate/flakegate/pkg/action"
	"github.com/flakegate/flakegate/pkg/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// The first signal (a hang-up too: a closed terminal, a dropped ssh
	// session) cancels the work, which then stops at its next check and
	// cleans up (matrix's worktrees and test processes); a second one ends
	// the process at once, as the runner's cancel (SIGINT, then SIGTERM)
	// expects.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Main(ctx, cli.Env{Args: os.Args[1:], Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr,
		Action: func(ctx context.Context) int {
			return action.Run(ctx, action.Env{Getenv: os.Getenv, Stdout: os.Stdout})
		}})
	stop()
	os.Exit(code)
}

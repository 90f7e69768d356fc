// Command flakegate tells flaky tests from tests broken by a patch. It is a
// GitHub Action and a command-line tool; see README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/flakegate/flakegate/pkg/action"
	"github.com/flakegate/flakegate/pkg/cli"
)

func main() {
	// flakegate is a short batch run that allocates little but often: fewer
	// collections are faster, and the soft memory limit keeps the peak
	// bounded (the README's benchmark peaks under 64 MiB). GOGC and
	// GOMEMLIMIT in the environment still win.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(48 << 20)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.Env{Args: os.Args[1:], Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr,
		Action: func(ctx context.Context) int {
			return action.Run(ctx, action.Env{Getenv: os.Getenv, Stdout: os.Stdout})
		}})
	stop()
	os.Exit(code)
}

package cli

import (
	"context"
	"fmt"

	"github.com/flakegate/flakegate/pkg/demo"
)

// demoCmd runs the weekly report and the PR gate on the bundled scenario
// against an in-process fake GitHub, and writes what a user would see.
func demoCmd(ctx context.Context, env Env, args []string) error {
	fs := newFlags("demo", env, args)
	out := fs.String("out", "flakegate-demo", "folder for the comment, the job summaries and the report")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: flakegate demo [-out DIR]\n\n"+
			"Runs the action's weekly report and PR gate on a bundled scenario, against a fake GitHub\n"+
			"started in this process on loopback (no network, no token), and writes the PR comment,\n"+
			"the job summaries (Markdown and HTML) and the HTML report into DIR.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q: the demo takes only -out DIR", fs.Arg(0))
	}
	res, err := demo.Run(ctx, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "flakegate demo: %s, %d tests, main's CI history of the last week and pull request #%d, on a fake GitHub on loopback\n",
		demo.Repository, demo.Tests, demo.PR)
	fmt.Fprintf(env.Stdout, "weekly report: verdict %s, %s flaky tests (exit %d)\n", res.Report.Outputs["verdict"], res.Report.Outputs["flaky-count"], res.Report.Exit)
	fmt.Fprintf(env.Stdout, "PR gate:       verdict %s, %s blocking (exit %d: the required check fails)\n", res.Gate.Outputs["verdict"], res.Gate.Outputs["blocking-count"], res.Gate.Exit)
	fmt.Fprintln(env.Stdout)
	for _, f := range res.Files {
		fmt.Fprintf(env.Stdout, "%-60s %s\n", f.Path, f.What)
	}
	return nil
}

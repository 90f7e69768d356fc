package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/owners"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

// number is a float flag with an accepted range, named in its error.
type number struct {
	v        *float64
	min, max float64
	what     string
}

func (n number) String() string {
	if n.v == nil {
		return ""
	}
	return strconv.FormatFloat(*n.v, 'g', -1, 64)
}

func (n number) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < n.min || f > n.max || f != f {
		return fmt.Errorf("%s", n.what)
	}
	*n.v = f
	return nil
}

// count is an int flag with a minimum.
type count struct {
	v    *int
	min  int
	what string
}

func (c count) String() string {
	if c.v == nil {
		return ""
	}
	return strconv.Itoa(*c.v)
}

func (c count) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < c.min {
		return fmt.Errorf("%s", c.what)
	}
	*c.v = n
	return nil
}

// formats maps --format values to renderers and report file names.
var formats = []struct {
	name, file string
	write      func(io.Writer, *score.Report) error
}{
	{"text", "", render.Text},
	{"json", "report.json", render.JSON},
	{"csv", "report.csv", render.CSV},
	{"md", "report.md", func(w io.Writer, r *score.Report) error {
		return render.Markdown(w, r, render.MarkdownOptions{Title: "flakegate report"})
	}},
	{"html", "report.html", render.HTML},
}

func analyze(ctx context.Context, env Env, args []string) int {
	opts := score.Defaults()
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	format := &choice{value: "text", allowed: []string{"text", "json", "csv", "md", "html"}}
	fs.Var(number{&opts.Threshold, 0, 1, "threshold must be between 0 and 1"}, "threshold", "flag tests whose flaky-commit score reaches this (0 to 1)")
	fs.Var(count{&opts.MinCommits, 1, "min_commits must be at least 1"}, "min-commits", "consider tests seen on at least this many commits")
	fs.Var(number{&opts.InfraThreshold, 0.01, 1, "accepted values are numbers above 0 and at most 1"}, "infra-threshold", "fraction of failing tests that marks a run as an infrastructure failure")
	fs.Var(format, "format", "stdout format: text, json, csv, md or html")
	out := fs.String("out", "", "also write report.json, report.csv, report.md and report.html into `DIR`")
	jsonFile := fs.String("json", "", "also write the JSON report to `FILE`")
	workers := fs.Int("workers", 0, "files parsed at once (default: number of CPUs)")
	codeowners := fs.String("codeowners", "", "CODEOWNERS `FILE` for test owners (default: .github/CODEOWNERS, CODEOWNERS or docs/CODEOWNERS here)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: flakegate analyze [flags] PATH...\n\nPATH is a JUnit XML file, a directory (searched recursively for *.xml) or a glob (** matches directories).\n\n")
		fs.PrintDefaults()
	}
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(paths) == 0 {
		fmt.Fprintln(env.Stderr, "flakegate analyze: no PATH given: pass JUnit XML files, directories or globs")
		return 2
	}
	srcs, missing, err := collect.Local(paths)
	if err != nil {
		fmt.Fprintf(env.Stderr, "flakegate analyze: %v\n", err)
		return 2
	}
	h, err := history.Load(ctx, srcs, history.Options{Workers: *workers})
	if err != nil {
		fmt.Fprintf(env.Stderr, "flakegate analyze: %v\n", err)
		return 1
	}
	h.Skipped = append(missing, h.Skipped...)
	for _, s := range h.Skipped {
		fmt.Fprintf(env.Stderr, "flakegate: skipped %s: %s\n", render.Plain(s.Path), render.Plain(s.Error))
	}
	if len(srcs) == len(h.Skipped)-len(missing) {
		if len(srcs) == 0 {
			fmt.Fprintf(env.Stderr, "flakegate analyze: no JUnit XML files found in %v\n", paths)
		} else {
			fmt.Fprintf(env.Stderr, "flakegate analyze: none of the %d files could be read as JUnit XML (reasons above)\n", len(srcs))
		}
		return 1
	}
	opts.Now = now(env)
	rep, err := score.Score(h, opts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "flakegate analyze: %v\n", err)
		return 2
	}
	if err := addOwners(rep, *codeowners); err != nil {
		fmt.Fprintf(env.Stderr, "flakegate analyze: --codeowners: %v\n", err)
		return 2
	}
	if rep.ResultsWithoutCommit > 0 {
		fmt.Fprintf(env.Stderr, "flakegate: %d results have no commit_sha and cannot be compared across commits; add <property name=\"commit_sha\" value=\"...\"/> to the suite properties\n", rep.ResultsWithoutCommit)
	}
	if *out != "" {
		if err := writeReports(*out, rep); err != nil {
			fmt.Fprintf(env.Stderr, "flakegate analyze: --out: %v\n", err)
			return 1
		}
	}
	if *jsonFile != "" {
		if err := writeFile(*jsonFile, rep, render.JSON); err != nil {
			fmt.Fprintf(env.Stderr, "flakegate analyze: --json: %v\n", err)
			return 1
		}
	}
	for _, f := range formats {
		if f.name == format.value {
			if err := f.write(env.Stdout, rep); err != nil {
				fmt.Fprintf(env.Stderr, "flakegate analyze: %v\n", err)
				return 1
			}
		}
	}
	return 0
}

// addOwners maps tests' files to their CODEOWNERS owners: the file given,
// or the first of GitHub's places in the current directory.
func addOwners(rep *score.Report, file string) error {
	var f *owners.File
	var err error
	if file != "" {
		b, rerr := os.ReadFile(file)
		if rerr != nil {
			return rerr
		}
		f, err = owners.Parse(string(b))
	} else {
		f, _, err = owners.Find("", os.ReadFile)
	}
	if err != nil {
		return err
	}
	wd, _ := os.Getwd()
	f.Annotate(rep.Tests, wd)
	return nil
}

// now reads the clock, or SOURCE_DATE_EPOCH for reproducible reports.
func now(env Env) time.Time {
	if s := env.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(sec, 0).UTC()
		}
	}
	return time.Now().UTC()
}

// writeReports writes every file format into dir.
func writeReports(dir string, rep *score.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range formats {
		if f.file == "" {
			continue
		}
		if err := writeFile(filepath.Join(dir, f.file), rep, f.write); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, rep *score.Report, write func(io.Writer, *score.Report) error) error {
	var buf bytes.Buffer
	if err := write(&buf, rep); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

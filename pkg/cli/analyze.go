package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/owners"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

// number is a float flag. Its range is checked by the stage that owns it
// (score.Options.Validate, gate.Options.Validate), as in the action.
type number struct{ v *float64 }

func (n number) String() string {
	if n.v == nil {
		return ""
	}
	return strconv.FormatFloat(*n.v, 'g', -1, 64)
}

func (n number) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || math.IsInf(f, 0) || strings.ContainsAny(s, "xX_") {
		return errors.New("want a number") // decimal, as the action's inputs
	}
	*n.v = f
	return nil
}

// integer is a flag.Value for a whole number whose parse error says what
// is accepted, as number's does.
type integer struct{ v *int }

func (n integer) String() string {
	if n.v == nil {
		return "0" // the zero value's, so that the usage leaves out a default of 0
	}
	return strconv.Itoa(*n.v)
}

func (n integer) Set(s string) error {
	i, err := strconv.ParseInt(s, 10, 0)
	if err != nil {
		return errors.New("want a whole number")
	}
	*n.v = int(i)
	return nil
}

// duration is a flag.Value for a length of time whose parse error says
// what is accepted: flag.Duration says only "parse error" to --run-timeout 10.
type duration struct{ v *time.Duration }

func (d duration) String() string {
	if d.v == nil || *d.v == 0 {
		return "0" // the zero value's, so that the usage leaves out a default of 0
	}
	return d.v.String()
}

func (d duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration with its unit, such as 15m, 90s or 1h30m (0: no limit)")
	}
	*d.v = v
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

func analyze(ctx context.Context, env Env, args []string) error {
	opts := score.Defaults()
	fs := newFlags("analyze", env, args)
	format := &choice{value: "text", allowed: []string{"text", "json", "csv", "md", "html"}}
	fs.Var(number{&opts.Threshold}, "threshold", "flag tests whose flaky-commit score reaches this `NUMBER` (0 to 1)")
	fs.Var(integer{&opts.MinCommits}, "min-commits", "consider tests seen on at least `N` commits")
	fs.Var(number{&opts.InfraThreshold}, "infra-threshold", "fraction of failing tests (`NUMBER`, above 0, at most 1) that marks a run as an infrastructure failure")
	fs.Var(format, "format", "stdout `FORMAT`: text, json, csv, md or html")
	out := fs.String("out", "", "also write report.json, report.csv, report.md and report.html into `DIR`")
	jsonFile := fs.String("json", "", "also write the JSON report to `FILE`")
	workers := new(int)
	fs.Var(integer{workers}, "workers", "`N` files parsed at once; 0 means one per CPU")
	codeowners := fs.String("codeowners", "", "CODEOWNERS `FILE` for test owners (default: .github/CODEOWNERS, CODEOWNERS or docs/CODEOWNERS here)")
	commitSHA := fs.String("commit-sha", "", "the commit `SHA` of files whose suites state no commit_sha property, e.g. $(git rev-parse HEAD)")
	runID := fs.String("run-id", "", "the run `ID` of files whose suites state no run_id property (files of one run share it; without it each file is a run)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: flakegate analyze [flags] PATH...\n\nPATH is a JUnit XML file, a directory (searched recursively for *.xml) or a glob (** matches directories).\n\n")
		fs.PrintDefaults()
	}
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if *jsonFile == "-" {
		return usagef("--json -: want a file name; --format json prints the JSON report on standard output")
	}
	if *workers < 0 {
		return usagef("--workers %d: want 0 (one per CPU) or a positive number", *workers)
	}
	if opts.Now, err = now(env); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return usagef("%v", err)
	}
	if len(paths) == 0 {
		return usagef("no PATH given: pass JUnit XML files, directories or globs")
	}
	if slices.Contains(paths, "-") {
		return usagef("PATH -: standard input is not accepted: save the JUnit XML to a file and pass it")
	}
	if c := *commitSHA; c == "@" || strings.HasPrefix(c, "HEAD") || strings.ContainsAny(c, "~^") || strings.HasPrefix(c, "refs/") || strings.HasPrefix(c, "origin/") {
		return usagef("--commit-sha %s: a revision, not the commit's SHA: give --commit-sha \"$(git rev-parse %s)\"", c, c)
	}
	var def *model.Run
	if *commitSHA != "" || *runID != "" {
		def = &model.Run{CommitSHA: *commitSHA, RunID: *runID}
	}
	h, err := collect.LoadAs(ctx, "", paths, *workers, def)
	if h != nil {
		for _, s := range h.Skipped {
			fmt.Fprintf(env.Stderr, "flakegate: skipped %s: %s\n", render.Plain(s.Path), render.Plain(s.Error))
		}
	}
	if errors.Is(err, collect.ErrPaths) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if n := untimed(h); n > 0 && n < len(h.Runs) {
		fmt.Fprintf(env.Stderr, "flakegate: warning: %d of %d runs state no time (no suite timestamp, or one flakegate cannot read): they are ordered before every timed run, and the evidence that reads the order of runs (intermittent failures, regressions) reads them there; give every file a timestamp, e.g. <testsuite timestamp=\"2026-11-02T10:00:00Z\">\n", n, len(h.Runs))
	}
	rep, err := score.Score(h, opts)
	if err != nil {
		return usagef("%v", err)
	}
	if err := addOwners(rep, *codeowners, env.Stderr); err != nil {
		return usagef("--codeowners: %v", err)
	}
	if rep.ResultsWithoutCommit > 0 {
		fmt.Fprintf(env.Stderr, "flakegate: %d results have no commit_sha and cannot be compared across commits; add <property name=\"commit_sha\" value=\"...\"/> to the suite properties, or give --commit-sha SHA when the files are all of one commit\n", rep.ResultsWithoutCommit)
	}
	if s := render.LegBoundsNote(rep); s != "" {
		fmt.Fprintf(env.Stderr, "flakegate: warning: %s\n", s)
	}
	if *out != "" {
		if err := writeReports(*out, rep); err != nil {
			return fmt.Errorf("--out: %v", err)
		}
	}
	if *jsonFile != "" {
		if err := writeFile(*jsonFile, rep, render.JSON); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	for _, f := range formats {
		if f.name == format.value {
			if err := f.write(env.Stdout, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

// addOwners maps tests' files to their CODEOWNERS owners: the file given,
// or the first of GitHub's places in the current directory. It warns of
// each line it skips, as GitHub skips it.
func addOwners(rep *score.Report, file string, stderr io.Writer) error {
	var f *owners.File
	var err error
	name := file
	if file != "" {
		b, rerr := os.ReadFile(file)
		if rerr != nil {
			return rerr
		}
		f, err = owners.Parse(string(b))
	} else {
		f, name, err = owners.Find("", func(p string) ([]byte, error) { return collect.ReadSmall("", p, owners.MaxFileSize) })
	}
	if err != nil {
		return err
	}
	for _, s := range f.Skipped() {
		fmt.Fprintf(stderr, "flakegate: %s %s: skipped, as GitHub skips it\n", render.Plain(name), render.Plain(s))
	}
	// Run in a clone of the repository, its directory is named after it,
	// as on a runner: artifacts' paths there (<work>/shop/shop/tests/a.py)
	// become the repository's (tests/a.py).
	wd, _ := os.Getwd()
	f.Annotate(rep.Tests, model.Checkout{Root: wd, Name: filepath.Base(wd)})
	return nil
}

// now reads the clock, or SOURCE_DATE_EPOCH for reproducible reports; a
// value that is not an integer number of seconds is an error, as the
// reproducible-builds specification asks.
func now(env Env) (time.Time, error) {
	if s := env.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, usagef("SOURCE_DATE_EPOCH=%q: want the number of seconds since 1970-01-01 UTC, or unset it for the clock", s)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Now().UTC(), nil
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

// writeFile writes what write makes of v to path; a file is written only
// when the whole of it could be made.
func writeFile[T any](path string, v T, write func(io.Writer, T) error) error {
	var buf bytes.Buffer
	if err := write(&buf, v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// untimed counts the runs of h with no time.
func untimed(h *history.History) int {
	n := 0
	for _, r := range h.Runs {
		if r.Time.IsZero() {
			n++
		}
	}
	return n
}

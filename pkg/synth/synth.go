// Package synth writes synthetic CI histories as JUnit XML: commits in time
// order, runs per commit, and tests with known behaviour (stable, flaky,
// broken from a commit on, a regression fixed later, retried inside a run).
// Tests and benchmarks use it where the truth must be known; the bundled
// sample history in fixtures/ is made with it.
package synth

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Kind is a test's behaviour.
type Kind int

const (
	Stable Kind = iota
	// Flaky fails each attempt with probability P, independent of the code.
	Flaky
	// Broken fails on every run from commit From on.
	Broken
	// Regression fails on every run of commits From to To-1, then is fixed,
	// and on the commits of its Blocks.
	Regression
	// Retried fails with probability P and is then retried inside the run,
	// as gotestsum --rerun-fails writes it: the failed testcase, then the
	// repeated one, which passes. (pytest-rerunfailures writes the failed
	// attempt as an empty testcase, which history reads in pytest's
	// documents only.)
	Retried
)

// Behavior is what one test does.
type Behavior struct {
	Kind     Kind
	P        float64
	From, To int
	// Blocks are more spans of commits [from, to) in which a Regression
	// fails, besides From to To-1: two short regressions, or blips.
	Blocks [][2]int
}

// fails reports whether a Broken or Regression test fails on commit c.
func (b Behavior) fails(c int) bool {
	switch b.Kind {
	case Broken:
		return c >= b.From
	case Regression:
		if c >= b.From && c < b.To {
			return true
		}
		for _, bl := range b.Blocks {
			if c >= bl[0] && c < bl[1] {
				return true
			}
		}
	}
	return false
}

// Outage is a partial outage: in run Run (0-based, in time order), each
// suite is hit with probability Suites, and in a hit suite almost every test
// fails, as in a whole-run outage.
type Outage struct {
	Run    int
	Suites float64
}

// Spec describes a history.
type Spec struct {
	Commits       int
	RunsPerCommit int
	Tests         int
	Seed          uint64
	Start         time.Time     // time of the first run
	Every         time.Duration // time between commits
	// Behaviors maps a test index to its behaviour; the rest are stable.
	Behaviors map[int]Behavior
	// InfraRuns are run numbers (0-based, in time order) in which an
	// outage fails almost every test.
	InfraRuns []int
	// Rerun is the chance that a run with failures is re-run as attempt 2
	// on the same commit, as "Re-run failed jobs" does.
	Rerun float64
	// Outages are partial outages, hitting some suites of a run.
	Outages []Outage
	// SuiteSizes, when set, puts tests in suites (classnames) of these
	// sizes in turn, cycling; otherwise a suite is 50 tests.
	SuiteSizes []int
	// Names, when set, names tests by index; others get generated names.
	Names map[int][2]string // classname, name
}

// Run is one generated run.
type Run struct {
	Commit  int
	SHA     string
	ID      int
	Attempt int
	Time    time.Time
}

// SHA returns the synthetic commit SHA of commit i.
func SHA(i int) string {
	return fmt.Sprintf("%07x%033x", 0xc0ffee0+i, i)
}

// Name returns the classname and name of test i.
func (s *Spec) Name(i int) (string, string) {
	if n, ok := s.Names[i]; ok {
		return n[0], n[1]
	}
	if len(s.SuiteSizes) > 0 {
		return fmt.Sprintf("tests.test_suite_%03d", s.Suite(i)), fmt.Sprintf("test_case_%04d", i)
	}
	return fmt.Sprintf("tests.test_module_%02d", i/50), fmt.Sprintf("test_case_%04d", i)
}

// File returns the file of test i: its class's module for a test named in
// Names (tests.test_cart is tests/test_cart.py), tests/test_module_NN.py
// for the others, fifty tests to a file.
func (s *Spec) File(i int) string {
	if n, ok := s.Names[i]; ok && n[0] != "" {
		return strings.ReplaceAll(n[0], ".", "/") + ".py"
	}
	return fmt.Sprintf("tests/test_module_%02d.py", i/50)
}

// Suite returns the suite of test i: the index of its group of SuiteSizes,
// or i/50.
func (s *Spec) Suite(i int) int {
	if len(s.SuiteSizes) == 0 {
		return i / 50
	}
	for k := 0; ; k++ {
		n := max(1, s.SuiteSizes[k%len(s.SuiteSizes)])
		if i < n {
			return k
		}
		i -= n
	}
}

// OutageSuites returns the suites hit by Outages[i].
func (s *Spec) OutageSuites(i int) map[int]bool {
	o := s.Outages[i]
	return s.hitSuites(o.Run, o.Suites)
}

// hitSuites returns, for a partial outage of run runNo, whether each suite
// is hit. It draws from its own generator, so a spec without outages
// generates what it always did.
func (s *Spec) hitSuites(runNo int, frac float64) map[int]bool {
	rng := rand.New(rand.NewPCG(s.Seed^0x51ed2701, uint64(runNo)))
	hit := map[int]bool{}
	for k := 0; k <= s.Suite(max(0, s.Tests-1)); k++ {
		if rng.Float64() < frac {
			hit[k] = true
		}
	}
	return hit
}

// Generate calls emit for every run with a writer to fill; emit returns the
// writer for that run's JUnit document and a function to finish it.
func (s *Spec) Generate(emit func(Run) (io.Writer, func() error, error)) error {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	infra := map[int]bool{}
	for _, r := range s.InfraRuns {
		infra[r] = true
	}
	partial := map[int]float64{}
	for _, o := range s.Outages {
		partial[o.Run] = o.Suites
	}
	every := s.Every
	if every == 0 {
		every = time.Hour
	}
	runNo, runID := 0, 1000
	for c := 0; c < s.Commits; c++ {
		for k := 0; k < max(1, s.RunsPerCommit); k++ {
			runID++
			for attempt := 1; attempt <= 2; attempt++ {
				run := Run{Commit: c, SHA: SHA(c), ID: runID, Attempt: attempt,
					Time: s.Start.Add(time.Duration(c)*every + time.Duration(k*10+attempt)*time.Minute)}
				w, done, err := emit(run)
				if err != nil {
					return err
				}
				var hit map[int]bool
				if f, ok := partial[runNo]; ok {
					hit = s.hitSuites(runNo, f)
				}
				failed, err := s.writeRun(w, run, infra[runNo], hit, rng)
				if err != nil {
					return err
				}
				if err := done(); err != nil {
					return err
				}
				runNo++
				if failed == 0 || rng.Float64() >= s.Rerun {
					break
				}
			}
		}
	}
	return nil
}

func (s *Spec) writeRun(w io.Writer, run Run, outage bool, hit map[int]bool, rng *rand.Rand) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	ts := run.Time.UTC().Format("2006-01-02T15:04:05")
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"synthetic\">\n  <testsuite name=\"suite\" timestamp=\"%s\" hostname=\"ci\">\n", ts)
	fmt.Fprintf(bw, "    <properties>\n      <property name=\"commit_sha\" value=\"%s\"/>\n      <property name=\"run_id\" value=\"%d\"/>\n      <property name=\"run_attempt\" value=\"%d\"/>\n    </properties>\n", run.SHA, run.ID, run.Attempt)
	failed := 0
	for i := 0; i < s.Tests; i++ {
		cls, name := s.Name(i)
		b := s.Behaviors[i]
		down := outage || hit != nil && hit[s.Suite(i)]
		dur := 0.001 + rng.Float64()*0.2
		fail := false
		msg := ""
		switch {
		case down && rng.Float64() < 0.95:
			fail, msg = true, fmt.Sprintf("ConnectionError: could not connect to db:5432 after %.1fs", 30+rng.Float64())
		case b.Kind == Flaky || b.Kind == Retried:
			if rng.Float64() < b.P {
				fail = true
				msg = fmt.Sprintf("TimeoutError: timed out after %.3fs waiting for /tmp/pytest-of-ci/pytest-%d/sock", 5+rng.Float64(), rng.IntN(100))
			}
		case b.Kind == Broken && b.fails(run.Commit):
			fail, msg = true, fmt.Sprintf("AssertionError: expected 200, got 500 (%s.py:%d)", cls, 40+i%7)
		case b.Kind == Regression && b.fails(run.Commit):
			fail, msg = true, fmt.Sprintf("KeyError: 'user_id' (%s.py:%d)", cls, 10+i%5)
		}
		file := s.File(i)
		if !fail {
			fmt.Fprintf(bw, "    <testcase classname=%q name=%q file=%q line=\"%d\" time=\"%.3f\"/>\n", cls, name, file, 10+i%400, dur)
			continue
		}
		fmt.Fprintf(bw, "    <testcase classname=%q name=%q file=%q line=\"%d\" time=\"%.3f\">\n      <failure message=\"%s\" type=\"AssertionError\">%s&#10;  at %s:%d</failure>\n    </testcase>\n",
			cls, name, file, 10+i%400, dur, escape(msg), escape(msg), file, 10+i%400)
		if b.Kind == Retried && !down {
			// The rerun plugin reports the retry as a repeated testcase.
			fmt.Fprintf(bw, "    <testcase classname=%q name=%q file=%q line=\"%d\" time=\"%.3f\"/>\n", cls, name, file, 10+i%400, dur)
			continue
		}
		failed++
	}
	fmt.Fprintf(bw, "  </testsuite>\n</testsuites>\n")
	return failed, bw.Flush()
}

func escape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			out = append(out, "&lt;"...)
		case '&':
			out = append(out, "&amp;"...)
		case '>':
			out = append(out, "&gt;"...)
		case '"':
			out = append(out, "&quot;"...)
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// WriteDir writes one file per run into dir and returns their paths.
func (s *Spec) WriteDir(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	err := s.Generate(func(r Run) (io.Writer, func() error, error) {
		p := filepath.Join(dir, fmt.Sprintf("run-%02d-%d-%d.xml", r.Commit, r.ID, r.Attempt))
		f, err := os.Create(p)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, p)
		return f, f.Close, nil
	})
	return paths, err
}

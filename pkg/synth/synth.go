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
	// Regression fails on every run of commits From to To-1, then is fixed.
	Regression
	// Retried fails with probability P and is then retried inside the run
	// (pytest-rerunfailures, gotestsum --rerun-fails): the repeated testcase
	// passes.
	Retried
)

// Behavior is what one test does.
type Behavior struct {
	Kind     Kind
	P        float64
	From, To int
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
	return fmt.Sprintf("tests.test_module_%02d", i/50), fmt.Sprintf("test_case_%04d", i)
}

// Generate calls emit for every run with a writer to fill; emit returns the
// writer for that run's JUnit document and a function to finish it.
func (s *Spec) Generate(emit func(Run) (io.Writer, func() error, error)) error {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	infra := map[int]bool{}
	for _, r := range s.InfraRuns {
		infra[r] = true
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
				failed, err := s.writeRun(w, run, infra[runNo], rng)
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

func (s *Spec) writeRun(w io.Writer, run Run, outage bool, rng *rand.Rand) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	ts := run.Time.UTC().Format("2006-01-02T15:04:05")
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"synthetic\">\n  <testsuite name=\"suite\" timestamp=\"%s\" hostname=\"ci\">\n", ts)
	fmt.Fprintf(bw, "    <properties>\n      <property name=\"commit_sha\" value=\"%s\"/>\n      <property name=\"run_id\" value=\"%d\"/>\n      <property name=\"run_attempt\" value=\"%d\"/>\n    </properties>\n", run.SHA, run.ID, run.Attempt)
	failed := 0
	for i := 0; i < s.Tests; i++ {
		cls, name := s.Name(i)
		b := s.Behaviors[i]
		dur := 0.001 + rng.Float64()*0.2
		fail := false
		msg := ""
		switch {
		case outage && rng.Float64() < 0.95:
			fail, msg = true, fmt.Sprintf("ConnectionError: could not connect to db:5432 after %.1fs", 30+rng.Float64())
		case b.Kind == Flaky || b.Kind == Retried:
			if rng.Float64() < b.P {
				fail = true
				msg = fmt.Sprintf("TimeoutError: timed out after %.3fs waiting for /tmp/pytest-of-ci/pytest-%d/sock", 5+rng.Float64(), rng.IntN(100))
			}
		case b.Kind == Broken && run.Commit >= b.From:
			fail, msg = true, fmt.Sprintf("AssertionError: expected 200, got 500 (%s.py:%d)", cls, 40+i%7)
		case b.Kind == Regression && run.Commit >= b.From && run.Commit < b.To:
			fail, msg = true, fmt.Sprintf("KeyError: 'user_id' (%s.py:%d)", cls, 10+i%5)
		}
		file := fmt.Sprintf("tests/test_module_%02d.py", i/50)
		if !fail {
			fmt.Fprintf(bw, "    <testcase classname=%q name=%q file=%q line=\"%d\" time=\"%.3f\"/>\n", cls, name, file, 10+i%400, dur)
			continue
		}
		fmt.Fprintf(bw, "    <testcase classname=%q name=%q file=%q line=\"%d\" time=\"%.3f\">\n      <failure message=\"%s\" type=\"AssertionError\">%s&#10;  at %s:%d</failure>\n    </testcase>\n",
			cls, name, file, 10+i%400, dur, escape(msg), escape(msg), file, 10+i%400)
		if b.Kind == Retried && !outage {
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

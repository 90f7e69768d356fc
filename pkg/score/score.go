// Package score scores and ranks test flakiness over a history.
//
// It keeps the seed method's score exactly (flaky commits over commits, a
// commit being flaky for a test that both passed and failed on it) and adds
// what the seed lacks: Wilson intervals on every rate, ranking by evidence,
// the kind of evidence behind each finding, detection of intermittent
// failures in single-run histories, failure signatures, exclusion of
// infrastructure runs and of co-failures (a suite, or tests that always fail
// together, failing as one), and a flake rate with regression blocks taken
// out, by which tests are ranked. It does no I/O and takes its clock as a
// parameter.
package score

import (
	"cmp"
	"errors"
	"maps"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/internal/par"
	"github.com/flakegate/flakegate/pkg/model"
)

// Evidence kinds.
const (
	// EvidenceSameCommit: the test passed and failed in different runs of
	// one commit.
	EvidenceSameCommit = "same-commit"
	// EvidenceRetry: the test failed and then passed inside one run.
	EvidenceRetry = "retry"
	// EvidenceIntermittent: across commits in time order, the test's
	// failures came and went: at least three short failure episodes (at
	// most MaxEpisode failing commits each), of which at least two were
	// followed by a pass; the third may be the last, censored episode.
	// A broken test, a regression fixed later and one or two short
	// regressions never qualify, whatever the rate.
	EvidenceIntermittent = "intermittent"
)

// Options configure scoring. Start from Defaults: a zero threshold is a
// valid setting, so the zero value is not the default here.
type Options struct {
	Threshold  float64 // flag tests whose score reaches this (seed: 0.1)
	MinCommits int     // consider tests with at least this many commits (seed: 5)
	// InfraThreshold is the fraction of a run's tests that must fail for
	// the run to count as an infrastructure failure (an outage), excluded
	// from detection and reported apart.
	InfraThreshold float64
	// InfraMinTests is the smallest run that can be an infrastructure run:
	// a run of two tests that both failed says little about the machine.
	InfraMinTests int
	// MaxEpisode is the longest run of failing commits that still counts
	// as an intermittent failure; longer episodes are regressions.
	MaxEpisode int
	// Source is "local" or the repository.
	Source string
	// Now stamps the report.
	Now time.Time
}

// Defaults returns the seed's defaults and flakegate's.
func Defaults() Options {
	return Options{Threshold: 0.1, MinCommits: 5, InfraThreshold: model.DefaultInfra.Threshold, InfraMinTests: model.DefaultInfra.MinTests, MaxEpisode: 3, Source: "local"}
}

// Validate checks the options with the seed's messages.
func (o Options) Validate() error {
	var errs []error
	bad := func(name string, v any, want string) {
		errs = append(errs, &model.OptionError{Name: name, Value: v, Want: want})
	}
	if !(o.Threshold >= 0 && o.Threshold <= 1) {
		bad("threshold", o.Threshold, "threshold must be between 0 and 1")
	}
	if o.MinCommits < 1 {
		bad("min-commits", o.MinCommits, "min_commits must be at least 1")
	}
	if !(o.InfraThreshold > 0 && o.InfraThreshold <= 1) {
		bad("infra-threshold", o.InfraThreshold, "infra threshold must be greater than 0 and at most 1")
	}
	if o.MaxEpisode < 1 {
		bad("max-episode", o.MaxEpisode, "max episode must be at least 1")
	}
	return errors.Join(errs...)
}

// Interval is a 95% confidence interval on a rate.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// z95 is the two-sided 95% normal quantile.
const z95 = 1.959963984540054

// Wilson returns the Wilson score interval for k successes in n trials.
// With no trials the rate is unknown: [0, 1].
func Wilson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z95 * z95
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	iv := Interval{Low: math.Max(0, center-half), High: math.Min(1, center+half)}
	if k == 0 {
		iv.Low = 0
	}
	if k >= n {
		iv.High = 1
	}
	return iv
}

// Signature is one failure signature of a test.
type Signature struct {
	Hash string `json:"hash"`
	// Runs counts the runs (outside infrastructure runs) whose first
	// failure of the test had this signature (history.Cell.Sig: of a run
	// written as several files, the least by hash of their first
	// failures).
	Runs int `json:"runs"`
	// Failures counts every failed attempt with this signature.
	Failures int    `json:"failures"`
	Message  string `json:"message"`
}

// Test is one test's score. The first seven fields are the seed's.
type Test struct {
	Name              string   `json:"name"`
	Score             float64  `json:"score"`
	Commits           int      `json:"commits"`
	FlakyCommits      int      `json:"flaky_commits"`
	IsFlaky           bool     `json:"is_flaky"`
	CommitsWhereFlaky []string `json:"commits_where_flaky"`
	ErrorMessages     []string `json:"error_messages"`

	ScoreInterval Interval `json:"score_interval"`
	Runs          int      `json:"runs"`
	Attempts      int      `json:"attempts"`
	Failures      int      `json:"failures"`
	// FailureRate is failed attempts over attempts, skips excluded.
	FailureRate     float64  `json:"failure_rate"`
	FailureInterval Interval `json:"failure_rate_interval"`
	Evidence        []string `json:"evidence"`
	// Episodes counts runs of consecutive failing commits; Intermittent-
	// Commits counts the commits in short episodes that recovered, when the
	// test shows intermittent evidence.
	Episodes            int `json:"failure_episodes"`
	IntermittentCommits int `json:"intermittent_commits"`
	// FlakeScore is (flaky + intermittent commits) / commits, and
	// RankScore its Wilson lower bound.
	FlakeScore float64 `json:"flake_score"`
	RankScore  float64 `json:"rank_score"`
	// FlakeRate is the test's own failure rate: FailedCommits, the commits
	// on which it failed at least once, over RateCommits, its commits left
	// once infrastructure runs and events and its regression blocks
	// (RegressionCommits: episodes of more than MaxEpisode failing commits,
	// and such an episode still open at the end) are taken out. Tests are
	// ranked by FlakeRateInterval.Low, its Wilson lower bound.
	FlakeRate         float64  `json:"flake_rate"`
	FlakeRateInterval Interval `json:"flake_rate_interval"`
	FailedCommits     int      `json:"failed_commits"`
	RateCommits       int      `json:"rate_commits"`
	RegressionCommits int      `json:"regression_commits"`
	// InfraFailures counts the runs in which the test failed that were
	// left out as infrastructure: outage runs and co-failure events.
	InfraFailures int         `json:"infra_failures"`
	Signatures    []Signature `json:"signatures"`
	File          string      `json:"file,omitempty"`
	Line          int         `json:"line,omitempty"`
	// Owners are the file's owners in CODEOWNERS, when both are known.
	Owners []string `json:"owners,omitempty"`
	// Timeline has one letter per commit of Report.Commits: P passed, F
	// failed, M both, '.' no result. Set for tests that failed at least once.
	Timeline string `json:"timeline,omitempty"`
	// TooFewCommits: the test's evidence would flag it (its score reaches
	// the threshold, or it is intermittent), but it ran on fewer than
	// min_commits commits, so it is not flagged.
	TooFewCommits bool `json:"too_few_commits,omitempty"`
}

// Commit is one commit of the history, in time order.
type Commit struct {
	SHA  string    `json:"sha"`
	Time time.Time `json:"time,omitzero"`
	Runs int       `json:"runs"`
}

// InfraRun is a run excluded as an infrastructure failure.
type InfraRun struct {
	RunID   string    `json:"run_id,omitempty"`
	Attempt int       `json:"run_attempt,omitempty"`
	Commit  string    `json:"commit_sha,omitempty"`
	Source  string    `json:"source"`
	Time    time.Time `json:"time,omitzero"`
	Tests   int       `json:"tests"`
	Failed  int       `json:"failed"` // tests that failed an attempt (every one, or before a retry passed)
}

// Report is the scored history. Its first nine fields are the seed's.
type Report struct {
	GeneratedAt   time.Time `json:"generated_at"`
	Source        string    `json:"source"`
	Threshold     float64   `json:"threshold"`
	MinCommits    int       `json:"min_commits"`
	ResultsParsed int       `json:"results_parsed"`
	TestsAnalyzed int       `json:"tests_analyzed"`
	FlakyCount    int       `json:"flaky_count"`
	FlakyRate     float64   `json:"flaky_rate"`
	Tests         []Test    `json:"tests"`

	Totals       model.Totals          `json:"totals"`
	SkippedFiles []model.SkippedSource `json:"skipped_files"`
	Runs         int                   `json:"runs"`
	Commits      []Commit              `json:"commits"`
	InfraRuns    []InfraRun            `json:"infra_runs"`
	// ResultsWithoutCommit counts attempts from runs with no commit SHA:
	// they cannot be compared across commits and are not scored.
	ResultsWithoutCommit int     `json:"results_without_commit"`
	InfraThreshold       float64 `json:"infra_threshold"`
	// InfraEvents are co-failures left out as infrastructure events, in
	// run order: a suite, or a cluster of tests that always fail together,
	// failing in one run far above its usual rate. Whole outage runs are in
	// InfraRuns instead.
	InfraEvents InfraEvents `json:"infra_events"`
	// RecurringEvents are the suites whose co-failures, each an
	// infrastructure event, came in at least 3 runs and a fifth of the
	// runs the suite ran in: a flaky fixture or service its tests share,
	// flaky whatever its tests' own scores say; absent when none.
	RecurringEvents []RecurringGroup `json:"recurring_events,omitempty"`
	// SplitByDirectory are the flagged tests whose failures and passes
	// fall under different directory names of files with no run_id: the
	// legs of a matrix read as runs, perhaps; absent when none.
	SplitByDirectory []DirectorySplit `json:"split_by_directory,omitempty"`
	// TooFewCommits counts the tests with flaky evidence on fewer than
	// MinCommits commits (Test.TooFewCommits): not flagged, for want of
	// commits.
	TooFewCommits int `json:"too_few_commits"`
	// RepeatedRuns counts the runs (of at least InfraMinTests tests, not
	// outages) in which most tests ran more than once: repeated by the
	// runner, or written to several files of the run, such as the legs of
	// a matrix. Their results count as attempts of one test, so a test
	// that fails in one leg only looks flaky.
	RepeatedRuns int `json:"repeated_runs"`
	// FoldedLegRuns counts the runs of more legs (artifacts and their
	// directories) than flakegate tells apart: the rest of each counted
	// as one leg. LegSearchStopped says that the search for legs that
	// rerun or repeat another stopped at its bound, so every leg counted
	// as a project of its own. Both are absent when nothing was bounded
	// (history.LegBounds).
	FoldedLegRuns    int  `json:"folded_leg_runs,omitempty"`
	LegSearchStopped bool `json:"leg_search_stopped,omitempty"`
	// VaryingNames are the tests whose names vary from run to run (a seed,
	// a hash code, a UUID or a timestamp in the name), each scored as one
	// test under its name with the varying part written "…"
	// (history.FoldVarying), with how many names it had; absent when none.
	VaryingNames []VaryingName `json:"varying_names,omitempty"`
	// Branch is the branch whose workflow runs and last report the
	// action's report mode read (with the results input too); absent
	// from analyze's. A
	// report is the last report of its own branch only, whatever branch
	// the run that made it was on.
	Branch string `json:"branch,omitempty"`
}

// VaryingName is one test of Report.VaryingNames.
type VaryingName struct {
	Test  string `json:"test"`
	Names int    `json:"names"`
}

// Unflagged returns the tests not flagged for want of commits, in rank
// order.
func (r *Report) Unflagged() []Test {
	return r.where(func(t *Test) bool { return t.TooFewCommits })
}

// Flaky returns the flagged tests, in rank order.
func (r *Report) Flaky() []Test { return r.where(func(t *Test) bool { return t.IsFlaky }) }

func (r *Report) where(keep func(*Test) bool) []Test {
	var out []Test
	for i := range r.Tests {
		if keep(&r.Tests[i]) {
			out = append(out, r.Tests[i])
		}
	}
	return out
}

// IsInfraRun reports whether a run with this many tests and failed tests
// is an infrastructure failure: at least InfraMinTests tests, more than
// InfraThreshold of them failed. Such a run says nothing about any test.
func (o Options) IsInfraRun(tests, failed int) bool { return o.InfraRule().Is(tests, failed) }

// InfraRule is the options' rule for infrastructure runs.
func (o Options) InfraRule() model.InfraRule {
	return model.InfraRule{Threshold: o.InfraThreshold, MinTests: o.InfraMinTests}
}

// Score scores every test of h.
func Score(h *history.History, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	h, varying := history.FoldVarying(h)
	rep := &Report{
		GeneratedAt: o.Now.UTC(), Source: o.Source, Threshold: o.Threshold, MinCommits: o.MinCommits,
		ResultsParsed: h.Totals.Testcases, Totals: h.Totals, SkippedFiles: h.Skipped, Runs: len(h.Runs),
		InfraThreshold: o.InfraThreshold, FoldedLegRuns: h.Legs.FoldedRuns, LegSearchStopped: h.Legs.SearchStopped,
		Tests: []Test{}, Commits: []Commit{}, InfraRuns: []InfraRun{}, InfraEvents: InfraEvents{},
	}
	if rep.SkippedFiles == nil {
		rep.SkippedFiles = []model.SkippedSource{}
	}
	for name, n := range varying {
		rep.VaryingNames = append(rep.VaryingNames, VaryingName{Test: name, Names: n})
	}
	slices.SortFunc(rep.VaryingNames, func(a, b VaryingName) int { return strings.Compare(a.Test, b.Test) })

	// Runs: infrastructure exclusion and the commit axis. Runs are in
	// time order, so commits are in order of their first run.
	infra := make([]bool, len(h.Runs))
	runCommit := make([]int32, len(h.Runs))
	commitIdx := map[string]int32{}
	for i, r := range h.Runs {
		// An outage is most tests failing an attempt, whether or not a
		// retry then passed: a database not ready for the first attempts
		// made every test of the run look flaky (a report audit).
		outage := o.IsInfraRun(r.Tests, r.FailedAttempt)
		if r.Tests >= o.InfraMinTests && 2*r.Repeated > r.Tests && !outage {
			rep.RepeatedRuns++
		}
		if outage {
			infra[i] = true
			rep.InfraRuns = append(rep.InfraRuns, InfraRun{RunID: r.RunID, Attempt: r.Attempt, Commit: r.CommitSHA,
				Source: r.Source, Time: r.Time, Tests: r.Tests, Failed: r.FailedAttempt})
		}
		if r.CommitSHA == "" {
			runCommit[i] = -1
			continue
		}
		ci, ok := commitIdx[r.CommitSHA]
		if !ok {
			ci = int32(len(rep.Commits))
			commitIdx[r.CommitSHA] = ci
			rep.Commits = append(rep.Commits, Commit{SHA: r.CommitSHA, Time: r.Time})
		}
		if !infra[i] {
			rep.Commits[ci].Runs++
		}
		runCommit[i] = ci
	}

	ev := detectEvents(h, infra, runCommit, len(rep.Commits), o)
	rep.InfraEvents = ev.Events()
	rep.RecurringEvents = ev.recurring

	// Tests are scored independently: split them across the cores, each
	// part with its own scratch state, and keep the input order.
	scored := make([]Test, len(h.Tests))
	keep := make([]bool, len(h.Tests))
	var noCommit atomic.Int64
	par.Parts(len(h.Tests), 256, func(lo, hi int) {
		sc := scorer{o: o, infra: infra, skip: slices.Clone(infra), ev: ev, runCommit: runCommit, commits: rep.Commits,
			state: make([]commitState, len(rep.Commits))}
		for i := lo; i < hi; i++ {
			scored[i], keep[i] = sc.test(i, h.Tests[i])
		}
		noCommit.Add(int64(sc.noCommit))
	})
	for i := range scored {
		if keep[i] && scored[i].IsFlaky {
			if fails, passes, ok := splitByDirectory(h, infra, runCommit, h.Tests[i]); ok {
				rep.SplitByDirectory = append(rep.SplitByDirectory, DirectorySplit{Test: scored[i].Name, FailsUnder: fails, PassesUnder: passes})
			}
		}
	}
	slices.SortFunc(rep.SplitByDirectory, func(a, b DirectorySplit) int { return strings.Compare(a.Test, b.Test) })
	// Rank by index: a Test is a few hundred bytes, and a sort moves
	// what it sorts many times. The tests left out follow the ranked ones
	// in the order, so that it is a permutation, and gather moves each
	// test once, within scored.
	order := make([]int32, 0, len(scored))
	for i := range scored {
		if keep[i] {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(i, j int32) int { return rankCmp(&scored[i], &scored[j]) })
	kept := len(order)
	for i := range scored {
		if !keep[i] {
			order = append(order, int32(i))
		}
	}
	gather(scored, order)
	clear(scored[kept:])
	rep.Tests = scored[:kept:kept]
	rep.ResultsWithoutCommit = int(noCommit.Load())
	rep.TestsAnalyzed = len(rep.Tests)
	for _, t := range rep.Tests {
		if t.IsFlaky {
			rep.FlakyCount++
		}
		if t.TooFewCommits {
			rep.TooFewCommits++
		}
	}
	if rep.TestsAnalyzed > 0 {
		rep.FlakyRate = math.Round(float64(rep.FlakyCount)/float64(rep.TestsAnalyzed)*1e4) / 1e4
	}
	return rep, nil
}

// DirectorySplit is a flagged test whose runs, read from files that state
// no run_id (each file a run), failed only in files under some directory
// names and passed only under others, on two commits or more: the legs of
// one run (junit-linux/, junit-windows/) read as runs of their own make a
// test broken on one leg look flaky (a report audit: score 1.0, 8 of 8).
type DirectorySplit struct {
	Test        string   `json:"test"`
	FailsUnder  []string `json:"fails_under"`
	PassesUnder []string `json:"passes_under"`
}

// splitByDirectory reports a DirectorySplit for one test: the directory
// names (the last part of each file's directory) of its failed and its
// passed runs, when they share none and two commits or more have both.
func splitByDirectory(h *history.History, infra []bool, runCommit []int32, t *history.Test) (fails, passes []string, ok bool) {
	failDir, passDir := map[string]bool{}, map[string]bool{}
	type sides struct{ fail, pass bool }
	byCommit := map[int32]*sides{}
	for _, c := range t.Cells {
		r := h.Runs[c.Run]
		if infra[c.Run] || c.Pass+c.Fail == 0 || runCommit[c.Run] < 0 || r.RunID != "" || len(r.Parts) > 0 {
			continue
		}
		dir := path.Base(path.Dir(filepath.ToSlash(r.Source)))
		if dir == "." || dir == "/" {
			return nil, nil, false
		}
		sd := byCommit[runCommit[c.Run]]
		if sd == nil {
			sd = &sides{}
			byCommit[runCommit[c.Run]] = sd
		}
		if c.Fail > 0 && c.Pass == 0 {
			failDir[dir], sd.fail = true, true
		} else {
			passDir[dir], sd.pass = true, true
		}
	}
	both := 0
	for _, sd := range byCommit {
		if sd.fail && sd.pass {
			both++
		}
	}
	if len(failDir) == 0 || len(passDir) == 0 || both < 2 {
		return nil, nil, false
	}
	for d := range failDir {
		if passDir[d] {
			return nil, nil, false
		}
	}
	fails, passes = slices.Sorted(maps.Keys(failDir)), slices.Sorted(maps.Keys(passDir))
	return fails, passes, true
}

// gather rearranges ts so that ts[j] holds what ts[src[j]] held, for src a
// permutation of ts's indices, moving each element once. It uses up src.
func gather[T any](ts []T, src []int32) {
	for j := range src {
		if src[j] == int32(j) {
			continue
		}
		tmp, cur := ts[j], j
		for {
			next := int(src[cur])
			src[cur] = int32(cur)
			if next == j {
				ts[cur] = tmp
				break
			}
			ts[cur] = ts[next]
			cur = next
		}
	}
}

// rankCmp ranks flagged tests first, then by the lower bound of their flake
// rate, so that 1 failure in 1 commit never outranks 30 in 100.
func rankCmp(a, b *Test) int {
	if a.IsFlaky != b.IsFlaky {
		if a.IsFlaky {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.FlakeRateInterval.Low, a.FlakeRateInterval.Low); c != 0 {
		return c
	}
	if c := cmp.Compare(b.FlakeRate, a.FlakeRate); c != 0 {
		return c
	}
	if c := cmp.Compare(b.RankScore, a.RankScore); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	if c := cmp.Compare(b.FailureInterval.Low, a.FailureInterval.Low); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

type commitState struct {
	pass, fail int
	runs       int
	failRuns   int // runs with a failed attempt
	endFail    int // runs whose every attempt failed
}

type scorer struct {
	o         Options
	infra     []bool
	skip      []bool // per run: infra, and the current test's events
	ev        *events
	runCommit []int32
	commits   []Commit
	state     []commitState // scratch, per commit
	touched   []int32
	noCommit  int // attempts in runs with no commit SHA
	long      []int
}

// blockAlpha is how improbable a long failure episode must be, for a flake
// of the test's own rate, to count as a regression block: about
// n (1-p) p^L, the expected number of runs of L failures in n commits.
const blockAlpha = 0.01

// regressionCommits returns the commits in regression blocks, of a test
// with failed failing commits out of commits and failure episodes longer
// than MaxEpisode of the given lengths. An episode is a block when a flake
// of the test's rate, measured without the blocks, would hardly ever fail
// that many commits in a row; a p = 0.5 flake's run of 5 failures is not a
// regression, a p = 0.05 test's run of 4 is. The rate is measured twice:
// first without every long episode, then without the blocks found.
func regressionCommits(long []int, failed, commits int) int {
	if len(long) == 0 {
		return 0
	}
	in := 0
	for _, l := range long {
		in += l
	}
	for range 2 {
		n := commits - in
		p := math.Max(float64(failed-in), 0.5) / float64(n+1)
		in = 0
		for _, l := range long {
			if float64(commits)*(1-p)*math.Pow(p, float64(l)) < blockAlpha {
				in += l
			}
		}
	}
	return in
}

func (s *scorer) test(ti int, ht *history.Test) (Test, bool) {
	t := Test{Name: ht.ID, File: ht.File, Line: ht.Line, CommitsWhereFlaky: []string{}, Evidence: []string{}, Signatures: []Signature{}}
	s.touched = s.touched[:0]
	retry := false
	sigRuns := make([]int, len(ht.Sigs)+1)
	infraFailures := false
	evSuite, evCluster := s.ev.eventRuns(ti)
	for _, r := range evSuite {
		s.skip[r] = true
	}
	for _, r := range evCluster {
		s.skip[r] = true
	}
	for _, c := range ht.Cells {
		if s.skip[c.Run] {
			if c.Fail > 0 {
				infraFailures = true
				t.InfraFailures++
			}
			continue
		}
		if c.Pass+c.Fail == 0 {
			continue
		}
		ci := s.runCommit[c.Run]
		if ci < 0 {
			s.noCommit += int(c.Pass) + int(c.Fail)
			continue
		}
		st := &s.state[ci]
		if st.runs == 0 {
			s.touched = append(s.touched, ci)
		}
		st.runs++
		st.pass += int(c.Pass)
		st.fail += int(c.Fail)
		if c.Fail > 0 {
			st.failRuns++
			sigRuns[c.Sig]++
			if c.Pass == 0 {
				st.endFail++
			}
		}
		if c.Mixed() {
			retry = true
		}
		t.Runs++
		t.Attempts += int(c.Pass) + int(c.Fail)
		t.Failures += int(c.Fail)
	}
	for _, r := range evSuite {
		s.skip[r] = s.infra[r]
	}
	for _, r := range evCluster {
		s.skip[r] = s.infra[r]
	}
	if len(s.touched) == 0 {
		return t, false
	}
	slices.Sort(s.touched)
	sameCommit := false
	timeline := make([]byte, len(s.commits))
	for i := range timeline {
		timeline[i] = '.'
	}
	// Episodes: runs of consecutive failing commits in time order.
	episode, shortRecovered, shortCommits := 0, 0, 0
	failed := 0
	long := s.long[:0] // lengths of episodes longer than MaxEpisode
	for _, ci := range s.touched {
		st := &s.state[ci]
		t.Commits++
		switch {
		case st.pass > 0 && st.fail > 0:
			t.FlakyCommits++
			t.CommitsWhereFlaky = append(t.CommitsWhereFlaky, s.commits[ci].SHA)
			// Failed in one run and passed in another, not only by a retry
			// inside one run: a run that failed beside one that passed
			// throughout, or one whose every attempt failed beside a pass
			// (two runs that each failed and passed on retry are retry
			// evidence alone).
			if st.failRuns > 0 && st.runs > st.failRuns || st.endFail > 0 && st.pass > 0 {
				sameCommit = true
			}
			timeline[ci] = 'M'
		case st.fail > 0:
			timeline[ci] = 'F'
		default:
			timeline[ci] = 'P'
		}
		if st.fail > 0 {
			failed++
		}
		if timeline[ci] == 'F' {
			episode++
			continue
		}
		if episode > 0 {
			t.Episodes++
			if episode <= s.o.MaxEpisode {
				shortRecovered++
				shortCommits += episode
			} else {
				long = append(long, episode)
			}
			episode = 0
		}
	}
	censored := false
	if episode > 0 {
		// An episode still open at the end is censored: a short one may
		// yet recover, a long one is a regression block.
		t.Episodes++
		if episode <= s.o.MaxEpisode {
			censored = true
		} else {
			long = append(long, episode)
		}
	}
	s.long = long
	t.RegressionCommits = regressionCommits(long, failed, t.Commits)
	for _, ci := range s.touched {
		s.state[ci] = commitState{}
	}
	slices.Sort(t.CommitsWhereFlaky)
	if t.Commits > 0 {
		t.Score = float64(t.FlakyCommits) / float64(t.Commits)
	}
	t.ScoreInterval = Wilson(t.FlakyCommits, t.Commits)
	if t.Attempts > 0 {
		t.FailureRate = float64(t.Failures) / float64(t.Attempts)
	}
	t.FailureInterval = Wilson(t.Failures, t.Attempts)
	if sameCommit {
		t.Evidence = append(t.Evidence, EvidenceSameCommit)
	}
	if retry {
		t.Evidence = append(t.Evidence, EvidenceRetry)
	}
	intermittent := shortRecovered >= 3 || shortRecovered == 2 && censored
	if intermittent {
		t.Evidence = append(t.Evidence, EvidenceIntermittent)
		t.IntermittentCommits = shortCommits
	}
	flake := t.FlakyCommits + t.IntermittentCommits
	t.FlakeScore = float64(flake) / float64(t.Commits)
	t.RankScore = Wilson(flake, t.Commits).Low
	t.FailedCommits = failed - t.RegressionCommits
	t.RateCommits = t.Commits - t.RegressionCommits
	if t.RateCommits > 0 {
		t.FlakeRate = float64(t.FailedCommits) / float64(t.RateCommits)
	}
	t.FlakeRateInterval = Wilson(t.FailedCommits, t.RateCommits)
	evident := t.Score >= s.o.Threshold || intermittent
	t.IsFlaky = t.Commits >= s.o.MinCommits && evident
	t.TooFewCommits = t.Commits < s.o.MinCommits && evident
	if t.Failures > 0 {
		t.Timeline = string(timeline)
	}
	keep := map[string]bool{}
	for i, sg := range ht.Sigs {
		if sigRuns[i+1] == 0 && infraFailures {
			// Not the first failure of any scored run: most likely seen
			// only in an infrastructure run. (A signature seen only on
			// reruns of a test with no infrastructure failures stays.)
			continue
		}
		keep[sg.Hash] = true
		t.Signatures = append(t.Signatures, Signature{Hash: sg.Hash, Runs: sigRuns[i+1], Failures: sg.Count, Message: sg.Message})
	}
	slices.SortStableFunc(t.Signatures, func(a, b Signature) int { return cmp.Compare(b.Runs, a.Runs) })
	t.ErrorMessages = ht.Messages(func(h string) bool { return keep[h] })
	return t, true
}

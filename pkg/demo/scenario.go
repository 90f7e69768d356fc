package demo

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/synth"
)

// The bundled scenario: acme/shop, a small Python service with 60 tests,
// whose CI workflow (ci.yml) uploads a junit-results artifact on every run
// of main, and pull request #42 that adds tax to the cart total.
const (
	Repository = "acme/shop"
	PR         = 42
	// K is the number of interleaved base and head repetitions the PR's
	// workflow ran (flakegate matrix -k 5 would keep results/base-N.xml
	// and results/head-N.xml).
	K = 5
	// Tests is the size of the suite.
	Tests = 60
	// The tests the demo is about.
	InducedFlake     = "tests.test_cart::test_total_includes_tax"
	PreExistingFlake = "tests.test_checkout::test_payment_times_out_under_load"
	// historyWorkflow is the CI workflow whose artifacts are the history.
	historyWorkflow = "ci.yml"
	// selfWorkflow is the workflow that runs flakegate.
	selfWorkflow = "flakegate.yml"
)

// Now is the demo's clock: a Monday morning, when the weekly report runs.
// Everything is dated from it, so the output is the same on every machine.
var Now = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// induced and preExisting are the indices of the two tests in History.
const (
	induced     = 8
	preExisting = 3
)

// History is main's last week before now: synth's sample suite (a flaky
// checkout test, a test retried inside its run, a rarely failing e-mail
// test, a regression fixed two commits later, and an outage in which almost
// every test failed) over 30 commits, one CI run per commit and re-runs of
// failed jobs half the time. The test the PR will make flaky is stable here.
func History(now time.Time) synth.Spec {
	spec := synth.Sample()
	spec.Tests = Tests
	// The sample's test broken from commit 22 on would leave main red for
	// that test, and a red base makes attribution undefined: the demo's PR
	// branches from a green main.
	delete(spec.Behaviors, 17)
	spec.Names[induced] = [2]string{"tests.test_cart", "test_total_includes_tax"}
	spec.Start = now.Add(-time.Duration(spec.Commits)*spec.Every - time.Hour)
	return spec
}

var (
	baseSHA = synth.SHA(synth.Sample().Commits - 1) // the PR branches from main's last commit
	headSHA = ghfake.SHA("acme/shop#42 head")
)

// sideFailures says which of the K runs of each side fail, per test index:
// the patch makes the cart test fail 3 of 5 head runs and never on base;
// the checkout test, flaky on main for weeks, fails on both sides.
var sideFailures = map[string]map[int][]int{
	"base": {preExisting: {2}},
	"head": {preExisting: {0, 3}, induced: {1, 2, 4}},
}

// failureMessage is what a failing test says.
func failureMessage(test, run int) string {
	switch test {
	case induced:
		return fmt.Sprintf("AssertionError: expected total 21.40, got 21.39 (tax rounded per line, run %d)", run)
	default:
		return "TimeoutError: timed out after 5.000s waiting for the payment gateway"
	}
}

// writeSide writes run k of a side ("base" or "head") as JUnit XML, in the
// format synth writes, with the commit and run id in the properties. Runs
// are interleaved in time, in the hour before now: base 1, head 1, base 2, ...
func writeSide(w io.Writer, side string, k int, now time.Time) {
	spec := History(now)
	sha, offset := baseSHA, 0
	if side == "head" {
		sha, offset = headSHA, 1
	}
	ts := now.Add(-time.Hour + time.Duration(2*k+offset)*3*time.Minute).Format("2006-01-02T15:04:05")
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pytest\">\n  <testsuite name=\"suite\" timestamp=\"%s\" hostname=\"runner\">\n", ts)
	fmt.Fprintf(w, "    <properties>\n      <property name=\"commit_sha\" value=\"%s\"/>\n      <property name=\"run_id\" value=\"%d\"/>\n    </properties>\n", sha, 9000+2*k+offset)
	failing := map[int]bool{}
	for test, runs := range sideFailures[side] {
		for _, r := range runs {
			if r == k {
				failing[test] = true
			}
		}
	}
	for i := 0; i < spec.Tests; i++ {
		cls, name := spec.Name(i)
		file := spec.File(i)
		if !failing[i] {
			fmt.Fprintf(w, "    <testcase classname=%q name=%q file=%q time=\"0.010\"/>\n", cls, name, file)
			continue
		}
		msg := xmlEscape(failureMessage(i, k+1))
		fmt.Fprintf(w, "    <testcase classname=%q name=%q file=%q time=\"0.010\">\n      <failure message=\"%s\" type=\"AssertionError\">%s</failure>\n    </testcase>\n", cls, name, file, msg, msg)
	}
	fmt.Fprintf(w, "  </testsuite>\n</testsuites>\n")
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Scenario is the bundled scenario loaded into a fake GitHub.
type Scenario struct {
	Repo *ghfake.Repo
	// ReportRun and GateRun are the flakegate workflow's runs: the weekly
	// report, then the pull request's gate (GITHUB_RUN_ID of each step).
	ReportRun, GateRun ghfake.Run
	now                time.Time
}

// Load loads the scenario into the fake, dated from now: main's CI runs
// with their JUnit artifacts, the pull request with its diff, and the two
// runs of the flakegate workflow.
func Load(s *ghfake.Server, now time.Time) (*Scenario, error) {
	sc := &Scenario{Repo: s.Repo(Repository), now: now}
	repo := sc.Repo
	spec := History(now)
	err := spec.Generate(func(sr synth.Run) (io.Writer, func() error, error) {
		var buf bytes.Buffer
		return &buf, func() error {
			run := repo.AddRun(ghfake.Run{Workflow: historyWorkflow, Name: "CI", HeadSHA: sr.SHA, CreatedAt: sr.Time})
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", CreatedAt: sr.Time,
				Files: map[string][]byte{"reports/junit.xml": buf.Bytes()}})
			return nil
		}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	repo.AddPullRequest(ghfake.PullRequest{Number: PR, Title: "Add sales tax to the cart total", HeadRef: "cart-tax",
		HeadSHA: headSHA, BaseSHA: baseSHA, Body: "Adds sales tax per line to the cart total.",
		Files: []ghfake.File{{Filename: "shop/cart.py", Status: "modified", Additions: 2, Deletions: 1,
			Patch: "@@ -40,3 +40,4 @@ def total(self):\n-    return sum(line.price for line in self.lines)\n+    rate = self.tax_rate()\n+    return sum(round(line.price * (1 + rate), 2) for line in self.lines)\n"}}})
	sc.ReportRun = repo.AddRun(ghfake.Run{Workflow: selfWorkflow, Name: "flakegate", Event: "schedule", HeadSHA: baseSHA, CreatedAt: now.Add(-30 * time.Minute)})
	sc.GateRun = repo.AddRun(ghfake.Run{Workflow: selfWorkflow, Name: "flakegate", Event: "pull_request", HeadSHA: headSHA, HeadBranch: "cart-tax",
		PullRequests: []int{PR}, Status: "in_progress", CreatedAt: now.Add(-5 * time.Minute)})
	return sc, nil
}

// WriteResults writes the K base and head repetitions the PR's job ran
// into dir as base-N.xml and head-N.xml, as flakegate matrix keeps them.
func (sc *Scenario) WriteResults(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for k := 0; k < K; k++ {
		for _, side := range []string{"base", "head"} {
			var b bytes.Buffer
			writeSide(&b, side, k, sc.now)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.xml", side, k+1)), b.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// PREvent is the pull_request event payload the runner writes to
// GITHUB_EVENT_PATH for the gate's run.
func PREvent() map[string]any {
	repo := map[string]any{"full_name": Repository}
	return map[string]any{
		"action": "synchronize", "number": PR,
		"pull_request": map[string]any{
			"number": PR, "state": "open", "title": "Add sales tax to the cart total", "body": "Adds sales tax per line to the cart total.", "labels": []any{},
			"head": map[string]any{"ref": "cart-tax", "sha": headSHA, "repo": repo},
			"base": map[string]any{"ref": "main", "sha": baseSHA, "repo": repo},
		},
		"repository": repo,
	}
}

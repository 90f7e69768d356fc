package action

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/render"
)

// These tests hold the report's collection to one rule: a report made on
// top of the previous report's carried history equals a fresh report of
// the same state of GitHub (DESIGN.md: nothing partial is presented as
// complete), and what it leaves out it says.

// pytestDoc is a JUnit document as pytest writes it: no run properties,
// so no run_attempt. tests maps a test name to whether it failed.
func pytestDoc(tests map[string]bool) []byte {
	names := make([]string, 0, len(tests))
	for n := range tests {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(`<testsuite name="pytest">`)
	for _, n := range names {
		if tests[n] {
			fmt.Fprintf(&b, `<testcase classname="tests.t" name="%s"><failure message="boom"/></testcase>`, n)
		} else {
			fmt.Fprintf(&b, `<testcase classname="tests.t" name="%s"/>`, n)
		}
	}
	b.WriteString(`</testsuite>`)
	return []byte(b.String())
}

// addPytestRun adds a run of workflow wf, the i-th of its series, with one
// JUnit artifact.
func addPytestRun(repo *ghfake.Repo, wf string, i int, tests map[string]bool) (ghfake.Run, ghfake.Artifact) {
	run := repo.AddRun(ghfake.Run{Workflow: wf, HeadSHA: ghfake.SHA(fmt.Sprint(wf, i)), CreatedAt: now.Add(-time.Duration(100-i) * time.Hour)})
	a := repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(tests)}})
	return run, a
}

// reported is what a report run left: its report.json, with the fields
// that name the moment of the run taken out, and the history it carries,
// as runs and cells.
type reported struct {
	Report  map[string]any
	Runs    []string            // run key, time, workflow, partial
	Cells   map[string][]string // test → "run key: pass/fail/skip"
	log     string
	summary string
}

// report runs a report at the given time and reads what it left.
func reportAt(t *testing.T, s *ghfake.Server, repo *ghfake.Repo, at time.Time, inputs map[string]string) reported {
	t.Helper()
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: at})
	in := map[string]string{"mode": "report"}
	for k, v := range inputs {
		in[k] = v
	}
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, in)
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	out := reported{log: r.stdout.String(), summary: r.summary(), Cells: map[string][]string{}}
	b, err := os.ReadFile(r.file("report-json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out.Report); err != nil {
		t.Fatal(err)
	}
	// The moment, and what this run parsed (the carried history spares
	// re-reading), are the run's own.
	for _, k := range []string{"generated_at", "totals", "results_parsed"} {
		delete(out.Report, k)
	}
	f, err := os.Open(filepath.Join(r.file("report-dir"), render.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := history.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range h.Runs {
		out.Runs = append(out.Runs, fmt.Sprintf("%s %s wf=%s/%d partial=%v", history.RunKey(run.Run), run.Time.Format(time.RFC3339), run.WorkflowFile, run.WorkflowID, run.Partial))
	}
	for _, tt := range h.Tests {
		for _, c := range tt.Cells {
			out.Cells[tt.ID] = append(out.Cells[tt.ID], fmt.Sprintf("%s: %d/%d/%d", history.RunKey(h.Runs[c.Run].Run), c.Pass, c.Fail, c.Skip))
		}
	}
	return out
}

// sameAsFresh fails the test when got differs from a fresh report in its
// report.json or its carried history.
func sameAsFresh(t *testing.T, fresh, got reported) {
	t.Helper()
	if diff := cmp.Diff(fresh.Report, got.Report); diff != "" {
		t.Errorf("report.json differs from a fresh report's (-fresh +got):\n%s\nlog:\n%s", diff, got.log)
	}
	if diff := cmp.Diff(fresh.Runs, got.Runs); diff != "" {
		t.Errorf("carried runs differ from a fresh report's (-fresh +got):\n%s", diff)
	}
	if diff := cmp.Diff(fresh.Cells, got.Cells); diff != "" {
		t.Errorf("carried cells differ from a fresh report's (-fresh +got):\n%s", diff)
	}
}

// TestReportRerunReadAgain: a run the previous report read is re-run; its
// documents name no attempt. The next report reads the run again and
// files its attempt-1 document under attempt 2, as a fresh report does;
// the attempt-1 filing the previous report carried is replaced, not
// counted a second time.
func TestReportRerunReadAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		// retry is what the re-run uploads: nothing, an artifact of the
		// same name that replaces the first (upload-artifact's overwrite:
		// the first is gone), or one beside it.
		retry string
	}{
		{name: "nothing uploaded", retry: ""},
		{name: "artifact overwritten", retry: "junit-results"},
		{name: "artifact beside", retry: "junit-results-retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var first ghfake.Artifact // run 3's
			build := func(s *ghfake.Server) (*ghfake.Repo, ghfake.Run) {
				repo := s.Repo(repoName)
				var rerun ghfake.Run
				for i := range 8 {
					r, a := addPytestRun(repo, "ci.yml", i, map[string]bool{"test_a": false, "test_b": i == 3})
					if i == 3 {
						rerun, first = r, a
					}
				}
				return repo, rerun
			}
			rerun := func(repo *ghfake.Repo, r ghfake.Run) {
				if _, err := repo.Rerun(r.ID, "success"); err != nil {
					t.Fatal(err)
				}
				if tc.retry == "" {
					return
				}
				if tc.retry == "junit-results" {
					// The fake has no deletion; an expired artifact is as
					// gone, and said in both reports alike.
					repo.ExpireArtifact(first.ID)
				}
				repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: tc.retry, Files: map[string][]byte{
					"junit.xml": pytestDoc(map[string]bool{"test_a": false, "test_b": false})}})
			}
			in := map[string]string{"workflows": "ci.yml"}

			s := newFake(t)
			repo, r := build(s)
			one := reportAt(t, s, repo, now.Add(-2*time.Hour), in)
			if one.Report["runs"] != float64(8) || failures(one, "test_b") != 1 {
				t.Fatalf("report 1: runs %v, test_b failures %d; want 8 and 1", one.Report["runs"], failures(one, "test_b"))
			}
			rerun(repo, r)
			second := reportAt(t, s, repo, now, in)

			fs := newFake(t)
			frepo, fr := build(fs)
			rerun(frepo, fr)
			fresh := reportAt(t, fs, frepo, now, map[string]string{"workflows": "ci.yml", "upload-artifact": "false"})
			if second.Report["runs"] != fresh.Report["runs"] || failures(second, "test_b") != failures(fresh, "test_b") {
				t.Errorf("report 2: runs %v, test_b failures %d; a fresh report: %v and %d\n%s",
					second.Report["runs"], failures(second, "test_b"), fresh.Report["runs"], failures(fresh, "test_b"), second.log)
			}
			if tc.retry == "junit-results-retry" {
				// Two documents of the same tests in one run make the
				// artifact part of the tests' identities ("[junit-results]")
				// in the history that holds that run: a fresh report names
				// every run's tests so, while the carried runs keep their
				// plain names. The runs and their counts agree.
				if diff := cmp.Diff(fresh.Runs, second.Runs); diff != "" {
					t.Errorf("carried runs differ from a fresh report's (-fresh +got):\n%s", diff)
				}
				return
			}
			sameAsFresh(t, fresh, second)
		})
	}
}

// failures sums a test's failures in a report over its identities (the
// test under every project).
func failures(r reported, test string) int {
	n := 0
	for _, x := range r.Report["tests"].([]any) {
		m := x.(map[string]any)
		if name := m["name"].(string); name == "tests.t::"+test || strings.HasPrefix(name, "tests.t::"+test+" [") {
			n += int(m["failures"].(float64))
		}
	}
	return n
}

// TestReportTransientReadAgain: one artifact fails to download (502 past
// the retries) in the first report, which says so and carries the run as
// read in part. The next report, the fault gone, reads that run again and
// equals a fresh report.
func TestReportTransientReadAgain(t *testing.T) {
	build := func(s *ghfake.Server) (*ghfake.Repo, ghfake.Artifact) {
		repo := s.Repo(repoName)
		var victim ghfake.Artifact
		for i := range 8 {
			run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint("c", i)), CreatedAt: now.Add(-time.Duration(100-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-unit", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_unit": false})}})
			a := repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-integration", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_integ": i%3 == 0})}})
			if i == 5 {
				victim = a
			}
		}
		return repo, victim
	}
	in := map[string]string{"workflows": "ci.yml"}
	s := newFake(t)
	repo, victim := build(s)
	zip := fmt.Sprintf("/repos/%s/actions/artifacts/%d/zip", repoName, victim.ID)
	// 1 + the client's 4 retries: every try of the first report fails.
	s.Inject(ghfake.Fault{Path: zip, Status: 502, Times: 5})
	first := reportAt(t, s, repo, now.Add(-2*time.Hour), in)
	skipped, _ := json.Marshal(first.Report["skipped_files"])
	if !strings.Contains(string(skipped), "junit-integration") || !strings.Contains(string(skipped), "download failed") {
		t.Errorf("report 1 does not list the artifact that failed to download: skipped_files %s", skipped)
	}
	if n := strings.Count(strings.Join(first.Runs, "\n"), "partial=true"); n != 1 {
		t.Errorf("report 1 carries %d runs read in part, want 1:\n%s", n, strings.Join(first.Runs, "\n"))
	}
	before := len(requestsTo(s, zip))
	second := reportAt(t, s, repo, now, in)
	if after := len(requestsTo(s, zip)); after <= before {
		t.Errorf("report 2 did not download the artifact that failed in report 1\n%s", second.log)
	}

	fs := newFake(t)
	frepo, _ := build(fs)
	fresh := reportAt(t, fs, frepo, now, map[string]string{"workflows": "ci.yml", "upload-artifact": "false"})
	sameAsFresh(t, fresh, second)

	// Read in full now, the run is known to the next report.
	third := reportAt(t, s, repo, now.Add(time.Hour), in)
	if !strings.Contains(third.log, "already known 8") {
		t.Errorf("report 3 does not take the 8 runs as known:\n%s", third.log)
	}
}

// requestsTo lists the API requests to one path.
func requestsTo(s *ghfake.Server, path string) []string {
	var out []string
	for _, r := range s.Requests(ghfake.HostAPI) {
		if r.Path == path {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// TestReportMaxRunsSaid: 250 runs in the lookback window, max-runs at its
// default of 200. The 50 runs not read are said in the report's list of
// what was left out, naming max-runs.
func TestReportMaxRunsSaid(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	const n = 250
	for i := range n {
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint("p", i)), CreatedAt: now.Add(-time.Duration(n-i) * 30 * time.Minute)})
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_a": i%4 == 0})}})
	}
	got := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "lookback-days": "7", "upload-artifact": "false"})
	if got.Report["runs"] != float64(200) {
		t.Errorf("runs %v, want 200", got.Report["runs"])
	}
	var found string
	for _, sk := range got.Report["skipped_files"].([]any) {
		e, _ := sk.(map[string]any)["error"].(string)
		if strings.Contains(e, "max-runs") {
			found = e
		}
	}
	if found == "" || !strings.Contains(found, "50 runs") || !strings.Contains(found, "200") {
		t.Errorf("skipped_files do not say that max-runs left 50 runs of the window out: %v", got.Report["skipped_files"])
	}
	if !strings.Contains(got.summary, "max-runs") {
		t.Errorf("the summary does not say that max-runs left runs out:\n%s", got.summary)
	}
	if !strings.Contains(got.log, "max-runs") {
		t.Errorf("the log does not say that max-runs left runs out:\n%s", got.log)
	}
}

// TestReportWorkflowsChanged: the first report reads ci.yml and
// nightly.yml, the second only ci.yml. The second scores no nightly run
// from the carried history, says how many it left out, and equals a fresh
// report of ci.yml. A report that selects nightly.yml again finds its
// runs still carried.
func TestReportWorkflowsChanged(t *testing.T) {
	build := func(s *ghfake.Server) *ghfake.Repo {
		repo := s.Repo(repoName)
		for i := range 8 {
			addPytestRun(repo, "ci.yml", i, map[string]bool{"test_a": i == 2})
			addPytestRun(repo, "nightly.yml", i, map[string]bool{"test_nightly": i%2 == 0})
		}
		return repo
	}
	s := newFake(t)
	repo := build(s)
	reportAt(t, s, repo, now.Add(-2*time.Hour), map[string]string{"workflows": "ci.yml,nightly.yml"})
	second := reportAt(t, s, repo, now.Add(-time.Hour), map[string]string{"workflows": "ci.yml"})
	if b, _ := json.Marshal(second.Report["tests"]); strings.Contains(string(b), "test_nightly") {
		t.Errorf("report 2 (workflows: ci.yml) scores nightly.yml's test from the carried history")
	}
	if !strings.Contains(second.log, "8 runs carried from the previous report, of workflows not in ci.yml") {
		t.Errorf("the log does not say that 8 carried runs were left out:\n%s", second.log)
	}
	fs := newFake(t)
	frepo := build(fs)
	fresh := reportAt(t, fs, frepo, now.Add(-time.Hour), map[string]string{"workflows": "ci.yml", "upload-artifact": "false"})
	if diff := cmp.Diff(fresh.Report, second.Report); diff != "" {
		t.Errorf("report.json differs from a fresh report's (-fresh +got):\n%s", diff)
	}

	third := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml,nightly.yml"})
	if third.Report["runs"] != float64(16) {
		t.Errorf("report 3 (both workflows again): runs %v, want 16\n%s", third.Report["runs"], third.log)
	}
}

// TestReportWorkflowsOldHistory: a history written before runs recorded
// their workflow cannot say which carried runs are nightly.yml's: they are
// kept, and the log says so.
func TestReportWorkflowsOldHistory(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	for i := range 8 {
		addPytestRun(repo, "ci.yml", i, map[string]bool{"test_a": i == 2})
		addPytestRun(repo, "nightly.yml", i, map[string]bool{"test_nightly": i%2 == 0})
	}
	reportAt(t, s, repo, now.Add(-2*time.Hour), map[string]string{"workflows": "ci.yml,nightly.yml"})
	ups := s.Uploads()
	files, err := ups[len(ups)-1].Files()
	if err != nil {
		t.Fatal(err)
	}
	// The same report as an earlier flakegate wrote it: its runs have no
	// workflow id or file.
	files[render.HistoryFile] = withoutRunFields(t, files[render.HistoryFile], "wf", "wi", "p")
	old := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-90 * time.Minute)})
	repo.AddArtifact(ghfake.Artifact{RunID: old.ID, Name: "flakegate-report", Zip: zipFiles(t, files)})

	second := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml"})
	if !strings.Contains(second.log, fmt.Sprintf("previous report: run %d", old.ID)) {
		t.Fatalf("report 2 did not read the old-format report:\n%s", second.log)
	}
	if second.Report["runs"] != float64(16) {
		t.Errorf("runs %v, want 16: the carried runs that record no workflow are kept", second.Report["runs"])
	}
	if !strings.Contains(second.log, "16 runs carried from the previous report cannot be matched to the workflows input") {
		t.Errorf("the log does not say that 16 carried runs record no workflow:\n%s", second.log)
	}
}

// withoutRunFields removes fields from every run of a carried history file.
func withoutRunFields(t *testing.T, gz []byte, fields ...string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, r := range c["runs"].([]any) {
		for _, f := range fields {
			if _, ok := r.(map[string]any)[f]; ok {
				removed++
			}
			delete(r.(map[string]any), f)
		}
	}
	if removed == 0 {
		t.Fatalf("no run has any of %v", fields)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := json.NewEncoder(zw).Encode(c); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

func zipFiles(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

package collect

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/internal/retry"
	"github.com/flakegate/flakegate/pkg/model"
)

var testRepo = ghapi.Repo{Owner: "octo", Name: "app"}

// t0 is the fake's clock start: runs are created relative to it.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func newFake(t testing.TB) (*ghfake.Server, *ghfake.Repo) {
	t.Helper()
	s := ghfake.New(t)
	s.SetClock(func() time.Time { return t0.Add(24 * time.Hour) })
	return s, s.Repo(testRepo.String())
}

// newClient returns a client of the fake whose retries do not sleep.
func newClient(t testing.TB, s *ghfake.Server) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Retry: retry.Policy{MaxRetries: 2, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func matchJUnit(name string) bool { ok, _ := path.Match("junit-*", name); return ok }

// junitDoc is a small JUnit document. Each case is a test name, failing
// when it starts with "!". attempt > 0 adds a run_attempt property; props
// are more properties as name, value pairs.
func junitDoc(attempt int, cases []string, props ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<testsuite name="suite" timestamp="2020-01-01T00:00:00">` + "\n<properties>\n")
	if attempt > 0 {
		fmt.Fprintf(&b, `  <property name="run_attempt" value="%d"/>`+"\n", attempt)
	}
	for i := 0; i+1 < len(props); i += 2 {
		fmt.Fprintf(&b, `  <property name="%s" value="%s"/>`+"\n", props[i], props[i+1])
	}
	b.WriteString("</properties>\n")
	for _, c := range cases {
		if name, fail := strings.CutPrefix(c, "!"); fail {
			fmt.Fprintf(&b, `<testcase classname="pkg" name="%s" time="0.1"><failure message="boom">boom</failure></testcase>`+"\n", name)
		} else {
			fmt.Fprintf(&b, `<testcase classname="pkg" name="%s" time="0.1"/>`+"\n", name)
		}
	}
	b.WriteString("</testsuite>\n")
	return []byte(b.String())
}

func runKeys(h *history.History) []string {
	var out []string
	for _, r := range h.Runs {
		out = append(out, history.RunKey(r.Run))
	}
	return out
}

func skippedMap(h *history.History) map[string]string {
	m := map[string]string{}
	for _, s := range h.Skipped {
		m[s.Path] = s.Error
	}
	return m
}

// requestsTo lists the API request paths matching a path.Match pattern.
func requestsTo(s *ghfake.Server, host ghfake.Host, pattern string) []string {
	var out []string
	for _, r := range s.Requests(host) {
		if ok, _ := path.Match(pattern, r.Path); ok {
			out = append(out, r.Path)
		}
	}
	return out
}

func TestGitHubRunMetadata(t *testing.T) {
	s, repo := newFake(t)
	a := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA("a"), HeadBranch: "main", Event: "push", Name: "CI", CreatedAt: t0})
	b := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA("b"), HeadBranch: "feature/x", Event: "pull_request", Name: "Tests", Workflow: "tests.yml", CreatedAt: t0.Add(time.Hour)})
	for _, r := range []ghfake.Run{a, b} {
		// The document's properties disagree with the API; the API wins.
		repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-linux", Files: map[string][]byte{
			"reports/TEST-a.xml": junitDoc(7, []string{"one", "!two"}, "commit_sha", "deadbeef", "run_id", "42"),
		}})
	}
	h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil {
		t.Fatal(err)
	}
	want := []history.Run{
		{Run: model.Run{CommitSHA: a.HeadSHA, RunID: fmt.Sprint(a.ID), Attempt: 1, Time: t0, Workflow: "CI", Branch: "main", Event: "push",
			Source: fmt.Sprintf("run %d attempt 1 / junit-linux / reports/TEST-a.xml", a.ID)}, Tests: 2, Failed: 1, FailedAttempt: 1},
		{Run: model.Run{CommitSHA: b.HeadSHA, RunID: fmt.Sprint(b.ID), Attempt: 1, Time: t0.Add(time.Hour), Workflow: "Tests", Branch: "feature/x", Event: "pull_request",
			Source: fmt.Sprintf("run %d attempt 1 / junit-linux / reports/TEST-a.xml", b.ID)}, Tests: 2, Failed: 1, FailedAttempt: 1},
	}
	// Each run records its workflow's id, as GitHub lists it.
	listed, err := newClient(t, s).ListWorkflowRuns(context.Background(), testRepo, ghapi.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range listed {
		for i := range want {
			if want[i].RunID == fmt.Sprint(r.ID) {
				want[i].WorkflowID = r.WorkflowID
			}
		}
	}
	if want[0].WorkflowID == 0 || want[0].WorkflowID == want[1].WorkflowID {
		t.Errorf("workflow ids %d, %d: want two, non-zero", want[0].WorkflowID, want[1].WorkflowID)
	}
	if diff := cmp.Diff(want, h.Runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if len(h.Skipped) != 0 || st.RunsListed != 2 || st.Downloaded != 2 || st.Parsed != 2 {
		t.Errorf("skipped %v, stats %+v", h.Skipped, st)
	}
	if got := len(h.Tests); got != 2 {
		t.Errorf("%d tests, want 2", got)
	}
}

// TestGitHubAttempts pins how documents are attributed to the attempts of
// a re-run run.
func TestGitHubAttempts(t *testing.T) {
	s, repo := newFake(t)
	re := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA("re"), Attempts: 3, CreatedAt: t0})
	one := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA("one"), CreatedAt: t0.Add(time.Hour)})
	add := func(run ghfake.Run, name string, doc []byte) {
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: name, Files: map[string][]byte{"TEST.xml": doc}})
	}
	add(re, "junit-a", junitDoc(1, []string{"!t1"}))       // a job of attempt 1 that attempt 3 did not re-run
	add(re, "junit-b", junitDoc(3, []string{"t1"}))        // says attempt 3
	add(re, "junit-c", junitDoc(0, []string{"t2"}))        // says nothing: the latest attempt
	add(re, "junit-d", junitDoc(9, []string{"t3"}))        // names an attempt the run does not have: the latest
	add(one, "junit-a", junitDoc(2, []string{"t1", "t2"})) // one attempt: the API's attempt wins
	c := newClient(t, s)
	h, st, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("%s|%d#1", re.HeadSHA, re.ID),
		fmt.Sprintf("%s|%d#3", re.HeadSHA, re.ID),
		fmt.Sprintf("%s|%d#1", one.HeadSHA, one.ID),
	}
	if diff := cmp.Diff(want, runKeys(h)); diff != "" {
		t.Fatalf("run keys (-want +got):\n%s", diff)
	}
	// Each attempt is dated by its own start (the fake starts attempt n
	// at created + (n-1)×10 min), not by the documents' timestamp.
	wantTimes := []time.Time{t0, t0.Add(20 * time.Minute), t0.Add(time.Hour)}
	wantTests := []int{1, 3, 2}
	for i, r := range h.Runs {
		if !r.Time.Equal(wantTimes[i]) || r.Tests != wantTests[i] || r.Workflow != "CI" || r.Branch != "main" {
			t.Errorf("run %s: time %v tests %d workflow %q branch %q; want time %v tests %d", runKeys(h)[i], r.Time, r.Tests, r.Workflow, r.Branch, wantTimes[i], wantTests[i])
		}
	}
	// Only the earlier attempt a document names was looked up, once.
	if got := requestsTo(s, ghfake.HostAPI, "/repos/octo/app/actions/runs/*/attempts/*"); !slices.Equal(got, []string{fmt.Sprintf("/repos/octo/app/actions/runs/%d/attempts/1", re.ID)}) || st.Attempts != 1 {
		t.Errorf("attempt lookups %v (stats %d), want attempt 1 of run %d once", got, st.Attempts, re.ID)
	}
	// Artifacts are listed once per run, not per attempt.
	if got := requestsTo(s, ghfake.HostAPI, "/repos/octo/app/actions/runs/*/artifacts"); len(got) != 2 {
		t.Errorf("artifact listings %v, want one per run", got)
	}

	// The latest attempt's key is what makes a run known.
	before := len(s.Requests(ghfake.HostAPI))
	_, st2, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit, Known: h.Keys()})
	if err != nil {
		t.Fatal(err)
	}
	if st2.RunsKnown != 2 || st2.Downloaded != 0 || len(s.Requests(ghfake.HostAPI))-before != 1 {
		t.Errorf("second collection: %+v, %d requests; want both runs known and only the runs list", st2, len(s.Requests(ghfake.HostAPI))-before)
	}
	// Knowing only an earlier attempt is not enough: the run is read again.
	known := map[string]bool{want[0]: true, want[2]: true}
	_, st3, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit, Known: known})
	if err != nil {
		t.Fatal(err)
	}
	if st3.RunsKnown != 1 || st3.Downloaded != 4 {
		t.Errorf("with attempt 1 known: %+v; want the re-run run read again", st3)
	}
}

// bulkDoc is a valid document of about size bytes.
func bulkDoc(size int) []byte {
	var cases []string
	for i := 0; len(cases)*60 < size; i++ {
		cases = append(cases, fmt.Sprintf("bulk_%05d", i))
	}
	return junitDoc(0, cases)
}

// TestGitHubLeftOut checks that every artifact and entry that is not read
// is reported with its reason, and that what can be read is, whether the
// zips are held in memory or in temporary files.
func TestGitHubLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		budget  int64
		spooled int
	}{
		{"in memory", 0, 0},
		{"on disk", -1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) { testLeftOut(t, tc.budget, tc.spooled) })
	}
}

func testLeftOut(t *testing.T, budget int64, spooled int) {
	evil := "/tmp/flakegate-evil.xml"
	if _, err := os.Stat(evil); err == nil {
		t.Fatalf("%s exists before the test", evil)
	}
	s, repo := newFake(t)
	run := repo.AddRun(ghfake.Run{CreatedAt: t0})
	const mib = 1 << 20
	bomb, err := bombZip("bomb.xml", 4*mib, 100)
	if err != nil {
		t.Fatal(err)
	}
	big := storedZip(t, "x.bin", noise(3*mib/2))
	arts := map[string]ghfake.Artifact{
		"junit-ok":       {Files: map[string][]byte{"TEST.xml": junitDoc(0, []string{"ok1", "!ok2"}), "run.log": []byte("log")}},
		"coverage":       {Files: map[string][]byte{"cover.xml": junitDoc(0, []string{"never"})}},
		"junit-expired":  {Files: map[string][]byte{"TEST.xml": junitDoc(0, []string{"never"})}, Expired: true},
		"junit-gone":     {Files: map[string][]byte{"TEST.xml": junitDoc(0, []string{"never"})}, Expired: true},
		"junit-notzip":   {Zip: []byte("this is not a zip archive at all")},
		"junit-badzip":   {Zip: []byte("PK\x03\x04 and no archive after it")},
		"junit-noxml":    {Files: map[string][]byte{"output.txt": []byte("PASS")}},
		"junit-corrupt":  {Files: map[string][]byte{"a.xml": junitDoc(0, []string{"c1"}), "b.xml": []byte(`<testsuite name="s"><testcase classname="pkg" name="phantom"/><testcase classname="pkg" name="cut`)}},
		"junit-many":     {Files: map[string][]byte{"1.xml": nil, "2.xml": nil, "3.xml": nil, "4.xml": nil, "5.xml": nil, "6.xml": nil}},
		"junit-bomb":     {Zip: bomb},
		"junit-big":      {Files: map[string][]byte{"big.xml": bytes.Repeat([]byte(" "), 2*mib)}},
		"junit-total":    {Files: map[string][]byte{"a.xml": bulkDoc(450 << 10), "b.xml": bulkDoc(450 << 10), "c.xml": bulkDoc(450 << 10), "d.xml": junitDoc(0, []string{"never"})}},
		"junit-toolarge": {Zip: big},
		"junit-liesize":  {Zip: big},
		"junit-traversal": {Files: map[string][]byte{
			"../../../../../../../../tmp/flakegate-evil.xml": junitDoc(0, []string{"never"}),
			"/abs/TEST-abs.xml":  junitDoc(0, []string{"never"}),
			`..\..\TEST-win.xml`: junitDoc(0, []string{"never"}),
			"C:/TEST-drive.xml":  junitDoc(0, []string{"never"}),
			"ok/TEST-ok.xml":     junitDoc(0, []string{"tr1"}),
		}},
	}
	ids := map[string]int64{}
	for name, a := range arts {
		a.RunID, a.Name = run.ID, name
		ids[name] = repo.AddArtifact(a).ID
	}
	// junit-gone is listed as live but answers 410; junit-liesize lists a
	// small size but is bigger than the download cap.
	s.SetResponseHook(func(method, p string, status int, body []byte) []byte {
		if !strings.HasSuffix(p, "/artifacts") {
			return body
		}
		return rewriteArtifacts(t, body, map[string]map[string]any{"junit-gone": {"expired": false}, "junit-liesize": {"size_in_bytes": 10}})
	})
	lim := ZipLimits{Download: mib, Total: mib, Entry: mib, Entries: 5}
	dir := t.TempDir()
	h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Match: matchJUnit, Limits: lim, MemoryBudget: budget, TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf("run %d attempt 1 / ", run.ID)
	want := map[string]string{
		p + "junit-expired":         "artifact expired (GitHub lists it as expired)",
		p + "junit-gone":            "artifact expired (410 Gone)",
		p + "junit-notzip":          "not a zip archive, and not one .xml file (an artifact uploaded with archive: false is read when its name ends in .xml)",
		p + "junit-badzip":          "not a zip archive (zip: not a valid zip file)",
		p + "junit-noxml":           "no JUnit XML in artifact (1 entries, none ending in .xml)",
		p + "junit-corrupt / b.xml": "", // the JUnit reader's message
		p + "junit-many":            "archive declares 6 entries, over the cap of 5 entries",
		p + "junit-bomb / bomb.xml": "entry inflates beyond its declared size of 100 bytes (zip bomb?): not read",
		p + "junit-big / big.xml":   "entry declares 2097152 bytes, over the cap of 1048576 bytes per entry: not read",
		p + "junit-total / c.xml":   "entry inflates the artifact beyond the cap of 1048576 bytes per artifact: not read",
		p + "junit-total / d.xml":   "not read: the artifact's entries inflate beyond the cap of 1048576 bytes per artifact",
		p + "junit-toolarge":        fmt.Sprintf("artifact is %d bytes, over the download cap of 1048576 bytes", len(big)),
		p + "junit-liesize":         "artifact over the download cap of 1048576 bytes",
		p + "junit-traversal / ../../../../../../../../tmp/flakegate-evil.xml": "entry name is outside the archive (..): not read",
		p + "junit-traversal / /abs/TEST-abs.xml":                              "entry name is an absolute path: not read",
		p + `junit-traversal / ..\..\TEST-win.xml`:                             "entry name is outside the archive (..): not read",
		p + "junit-traversal / C:/TEST-drive.xml":                              "entry name is an absolute path (drive letter): not read",
	}
	got := skippedMap(h)
	if msg := got[p+"junit-corrupt / b.xml"]; !strings.Contains(msg, "line 1") {
		t.Errorf("corrupt entry: %q, want the JUnit reader's message with the line", msg)
	}
	got[p+"junit-corrupt / b.xml"] = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// What could be read was: the phantom test of the cut-off document is
	// not in the history.
	var tests []string
	for _, tc := range h.Tests {
		tests = append(tests, tc.ID)
	}
	wantTests := []string{"pkg::c1", "pkg::ok1", "pkg::ok2", "pkg::tr1"}
	if tests = slices.DeleteFunc(tests, func(id string) bool { return strings.HasPrefix(id, "pkg::bulk_") }); !slices.Equal(tests, wantTests) {
		t.Errorf("tests %v, want %v and the bulk tests", tests, wantTests)
	}
	if len(h.Runs) != 1 || h.Runs[0].Failed != 1 {
		t.Errorf("runs %+v, want one with one failed test", h.Runs)
	}
	// Nothing was downloaded that the listing ruled out.
	for _, name := range []string{"coverage", "junit-expired", "junit-toolarge"} {
		if got := requestsTo(s, ghfake.HostAPI, fmt.Sprintf("/repos/octo/app/actions/artifacts/%d/zip", ids[name])); len(got) != 0 {
			t.Errorf("%s was downloaded: %v", name, got)
		}
	}
	if _, err := os.Stat(evil); err == nil {
		t.Errorf("%s was written", evil)
	}
	wantStats := Stats{RunsListed: 1, Artifacts: 15, Matched: 14, Unmatched: []string{"coverage"}, Expired: 2, Downloaded: 10, Spooled: spooled, Parsed: 8, Ignored: 2, LeftOut: 17}
	gotStats := st
	gotStats.Entries, gotStats.Bytes, gotStats.PeakHeld, gotStats.Requests, gotStats.BlobRequests = 0, 0, 0, 0, 0
	if diff := cmp.Diff(wantStats, gotStats, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	assertEmptyDir(t, dir)
}

// storedZip is a zip of one uncompressed entry.
func storedZip(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustZip(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	b, err := ghfake.ZipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGitHubListing covers pagination, filters, the exact Since bound and
// MaxRuns across workflows.
func TestGitHubListing(t *testing.T) {
	s, repo := newFake(t)
	var ci []ghfake.Run
	for i := range 230 {
		ci = append(ci, repo.AddRun(ghfake.Run{Workflow: "ci.yml", CreatedAt: t0.Add(time.Duration(i) * time.Minute)}))
	}
	var nightly []ghfake.Run
	for i := range 20 {
		nightly = append(nightly, repo.AddRun(ghfake.Run{Workflow: "nightly.yml", Name: "Nightly", CreatedAt: t0.Add(time.Duration(i)*time.Minute + 30*time.Second)}))
	}
	for i := range 10 {
		repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadBranch: "dev", CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "schedule", CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo.AddRun(ghfake.Run{Workflow: "ci.yml", Status: "in_progress", CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	c := newClient(t, s)
	ctx := context.Background()

	// No artifacts: only the listing matters here.
	h, st, err := GitHub(ctx, c, GitHubOptions{Repo: testRepo, Workflows: []string{"ci.yml"}, Branch: "main", Event: "push", Since: t0.Add(30 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if st.RunsListed != 200 || len(st.NoResults) != 200 || len(h.Runs) != 0 {
		t.Errorf("listed %d runs (%d without results), want the 200 since minute 30", st.RunsListed, len(st.NoResults))
	}
	if got := requestsTo(s, ghfake.HostAPI, "/repos/octo/app/actions/workflows/ci.yml/runs"); len(got) != 3 {
		t.Errorf("%d pages of runs, want 3 (230 runs on the day, 100 a page)", len(got))
	}
	for _, q := range s.Requests(ghfake.HostAPI) {
		if strings.HasSuffix(q.Path, "/runs") && !strings.Contains(q.RawQuery, "created=%3E%3D2026-03-02") {
			t.Errorf("runs listed without the day filter: %s", q.RawQuery)
		}
	}

	// MaxRuns keeps the newest runs over all workflows.
	_, st, err = GitHub(ctx, c, GitHubOptions{Repo: testRepo, Workflows: []string{"ci.yml", "nightly.yml"}, Branch: "main", Event: "push", MaxRuns: 30})
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(ci), nightly...)
	slices.SortFunc(all, func(a, b ghfake.Run) int { return b.CreatedAt.Compare(a.CreatedAt) })
	var want []string
	for _, r := range all[:30] {
		want = append(want, history.RunKey(model.Run{CommitSHA: r.HeadSHA, RunID: fmt.Sprint(r.ID), Attempt: 1}))
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, st.NoResults); diff != "" || st.RunsListed != 30 {
		t.Errorf("MaxRuns 30 over two workflows: listed %d (-want +got):\n%s", st.RunsListed, diff)
	}

	// A workflow that does not exist is an error, with an honest history.
	h, _, err = GitHub(ctx, c, GitHubOptions{Repo: testRepo, Workflows: []string{"nope.yml"}})
	if !errors.Is(err, ghapi.ErrNotFound) || h == nil || len(h.Skipped) != 1 {
		t.Errorf("unknown workflow: err %v, history %+v", err, h)
	}
}

// TestGitHubKnownRuns checks that known runs cost no artifact request, and
// that a second collection reads only the runs added since the first.
func TestGitHubKnownRuns(t *testing.T) {
	s, repo := newFake(t)
	addRuns := func(from, n int) map[int64]bool {
		ids := map[int64]bool{}
		for i := from; i < from+n; i++ {
			r := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA(fmt.Sprint("c", i)), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
			a := repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": junitDoc(0, []string{"a", "b"})}})
			ids[r.ID], ids[a.ID] = true, true
		}
		return ids
	}
	addRuns(0, 10)
	c := newClient(t, s)
	h1, st1, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil || len(h1.Runs) != 10 || st1.Downloaded != 10 {
		t.Fatalf("first collection: %v, %d runs, %+v", err, len(h1.Runs), st1)
	}
	fresh := addRuns(10, 5)
	mark := len(s.Requests())
	h2, st2, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit, Known: h1.Keys()})
	if err != nil {
		t.Fatal(err)
	}
	if st2.RunsListed != 15 || st2.RunsKnown != 10 || st2.Downloaded != 5 || len(h2.Runs) != 5 {
		t.Errorf("second collection: %d runs, %+v", len(h2.Runs), st2)
	}
	for _, q := range s.Requests()[mark:] {
		var id int64
		if _, err := fmt.Sscanf(path.Base(strings.TrimSuffix(strings.TrimSuffix(q.Path, "/artifacts"), "/zip")), "%d", &id); err != nil {
			continue // the runs list, and blob paths named <id>.zip
		}
		if !fresh[id] {
			t.Errorf("request for a known run or its artifact: %s %s", q.Host, q.Path)
		}
	}
	for _, q := range s.Requests(ghfake.HostBlob)[10:] {
		var id int64
		fmt.Sscanf(strings.TrimSuffix(path.Base(q.Path), ".zip"), "%d", &id)
		if !fresh[id] {
			t.Errorf("known artifact downloaded again: %s", q.Path)
		}
	}
	both, err := history.Combine(h1, h2, time.Time{})
	if err != nil || len(both.Runs) != 15 {
		t.Errorf("combined: %v, %d runs", err, len(both.Runs))
	}
}

// TestGitHubExclude checks that excluded runs are left out before their
// artifacts are listed, and counted.
func TestGitHubExclude(t *testing.T) {
	s, repo := newFake(t)
	head := ghfake.SHA("pr-head")
	var keep []ghfake.Run
	excluded := map[int64]bool{}
	for i := range 6 {
		sha := ghfake.SHA(fmt.Sprint("c", i))
		if i%3 == 0 {
			sha = head
		}
		r := repo.AddRun(ghfake.Run{HeadSHA: sha, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": junitDoc(0, []string{"a", "!b"})}})
		if sha == head {
			excluded[r.ID] = true
		} else {
			keep = append(keep, r)
		}
	}
	h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Match: matchJUnit,
		Exclude: func(r ghapi.Run) bool { return r.HeadSHA == head }})
	if err != nil {
		t.Fatal(err)
	}
	if st.RunsListed != 6 || st.RunsExcluded != 2 || st.Downloaded != 4 || len(h.Runs) != len(keep) {
		t.Errorf("%d runs, stats %+v; want 6 listed, 2 excluded, 4 downloaded", len(h.Runs), st)
	}
	for _, r := range h.Runs {
		if r.CommitSHA == head {
			t.Errorf("run %s of the excluded commit was read", r.RunID)
		}
	}
	for _, p := range requestsTo(s, ghfake.HostAPI, "/repos/octo/app/actions/runs/*/artifacts") {
		var id int64
		fmt.Sscanf(strings.TrimPrefix(p, "/repos/octo/app/actions/runs/"), "%d", &id)
		if excluded[id] {
			t.Errorf("artifacts of an excluded run were listed: %s", p)
		}
	}
}

// TestGitHubConcurrency checks that downloads overlap, stay within
// Concurrency, hold at most Concurrency zips, and never send the token to
// the blob host.
func TestGitHubConcurrency(t *testing.T) {
	for _, conc := range []int{1, 4} {
		t.Run(fmt.Sprint("concurrency-", conc), func(t *testing.T) {
			s, repo := newFake(t)
			s.SetLatency(15 * time.Millisecond)
			maxZip := 0
			for i := range 12 {
				r := repo.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
				a := repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": bulkDoc(2000 * (i + 1))}})
				_ = a
				maxZip = max(maxZip, len(mustZip(t, map[string][]byte{"t.xml": bulkDoc(2000 * (i + 1))})))
			}
			h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Concurrency: conc, Workers: 2})
			if err != nil || len(h.Runs) != 12 {
				t.Fatalf("%v, %d runs", err, len(h.Runs))
			}
			if got := s.MaxConcurrent(); got > conc || (conc > 1) != (got > 1) {
				t.Errorf("%d requests at once, want %d", got, conc)
			}
			if st.PeakHeld <= 0 || st.PeakHeld > int64(conc*maxZip) {
				t.Errorf("peak held %d bytes, want at most %d × %d", st.PeakHeld, conc, maxZip)
			}
			blob := s.Requests(ghfake.HostBlob)
			if len(blob) != 12 || st.BlobRequests != 12 {
				t.Errorf("%d blob requests (stats %d), want 12", len(blob), st.BlobRequests)
			}
			for _, q := range blob {
				for k, vs := range q.Header {
					for _, v := range vs {
						if strings.EqualFold(k, "Authorization") || strings.Contains(v, ghfake.Token) {
							t.Errorf("blob request %s carries %s: %q", q.Path, k, v)
						}
					}
				}
			}
		})
	}
}

// TestGitHubBudget pins the API requests a collection spends. A
// GITHUB_TOKEN gets 1,000 an hour. With W workflows, R runs listed, U of
// them not known and D artifacts downloaded (no retries, no re-run runs):
//
//	requests = Σ_w ⌈R_w/100⌉ + U + D
//
// one runs page per 100 runs, one artifact listing per unknown run (per
// 100 artifacts), one download request per artifact (its 302; the blob
// host does not count). When every unknown run has an artifact, U ≤ A and
// this is at most R/100 + 2A + W. A run with no artifact still costs its
// listing, so without artifacts the bound is R/100 + U + W; Stats.NoResults
// lets the caller add such runs to Known. Each earlier attempt a document
// names adds one request (Stats.Attempts).
func TestGitHubBudget(t *testing.T) {
	s, repo := newFake(t)
	const R, withArtifacts = 210, 150
	for i := range R {
		r := repo.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		if i < withArtifacts {
			repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": junitDoc(0, []string{"a"})}})
			repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "coverage", Files: map[string][]byte{"c.txt": []byte("85%")}})
		}
	}
	c := newClient(t, s)
	h, st, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil {
		t.Fatal(err)
	}
	A := st.Downloaded
	pages := (R + 99) / 100
	if A != withArtifacts || len(h.Runs) != withArtifacts {
		t.Fatalf("downloaded %d, %d runs", A, len(h.Runs))
	}
	if want := int64(pages + R + A); st.Requests != want || int64(len(s.Requests(ghfake.HostAPI))) != want {
		t.Errorf("%d requests (fake saw %d), want %d pages + %d listings + %d downloads = %d", st.Requests, len(s.Requests(ghfake.HostAPI)), pages, R, A, want)
	}
	if len(st.NoResults) != R-withArtifacts {
		t.Errorf("%d runs without results, want %d", len(st.NoResults), R-withArtifacts)
	}

	// Known runs and runs known to have no results cost only the pages.
	known := h.Keys()
	for _, k := range st.NoResults {
		known[k] = true
	}
	_, st2, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit, Known: known})
	if err != nil || st2.Requests != int64(pages) || st2.RunsKnown != R {
		t.Errorf("with everything known: %v, %d requests, want %d", err, st2.Requests, pages)
	}

	// When every run has an artifact: R/100 + 2A + 1 (one workflow).
	s2, repo2 := newFake(t)
	for i := range R {
		r := repo2.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo2.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": junitDoc(0, []string{"a"})}})
	}
	_, st3, err := GitHub(context.Background(), newClient(t, s2), GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil {
		t.Fatal(err)
	}
	if bound := float64(R)/100 + 2*float64(st3.Downloaded) + 1; float64(st3.Requests) > bound {
		t.Errorf("%d requests for %d runs and %d artifacts, over R/100 + 2A + 1 = %.1f", st3.Requests, R, st3.Downloaded, bound)
	}
}

// TestGitHubHardFailures checks that a spent rate limit or a cancelled
// context stops the collection with an error and an honest partial history.
func TestGitHubHardFailures(t *testing.T) {
	const runs = 30
	setup := func(t *testing.T) (*ghfake.Server, *ghapi.Client) { return runsOfOneTest(t, runs) }
	check := func(t *testing.T, h *history.History, st Stats, err error, target error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Fatalf("err = %v, want %v", err, target)
		}
		if h == nil {
			t.Fatal("nil history")
		}
		if len(st.Incomplete) == 0 || len(h.Runs)+len(st.Incomplete) != runs {
			t.Errorf("%d runs read + %d incomplete, want %d in all", len(h.Runs), len(st.Incomplete), runs)
		}
		for _, k := range runKeys(h) {
			if slices.Contains(st.Incomplete, k) {
				t.Errorf("run %s is both read and incomplete", k)
			}
		}
		if got := skippedMap(h)["workflow runs of octo/app"]; !strings.Contains(got, fmt.Sprintf("%d of %d runs not read in full", len(st.Incomplete), runs)) {
			t.Errorf("no summary of what was left out: %q", got)
		}
	}
	t.Run("rate-limit", func(t *testing.T) {
		s, c := setup(t)
		// The runs list and 19 more requests: some runs are read.
		s.SetRateLimit(20, t0.Add(48*time.Hour))
		h, st, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Concurrency: 2})
		check(t, h, st, err, ghapi.ErrRateLimited)
		if len(h.Runs) == 0 {
			t.Error("nothing read before the limit")
		}
	})
	t.Run("cancel", func(t *testing.T) {
		s, c := setup(t)
		s.SetLatency(10 * time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel once the first zip has been served.
		go func() {
			for s.RequestCount(ghfake.HostBlob) == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		h, st, err := GitHub(ctx, c, GitHubOptions{Repo: testRepo, Concurrency: 2})
		check(t, h, st, err, context.Canceled)
	})
	t.Run("cancelled-before", func(t *testing.T) {
		_, c := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h, _, err := GitHub(ctx, c, GitHubOptions{Repo: testRepo})
		if !errors.Is(err, context.Canceled) || h == nil {
			t.Errorf("err = %v, history %v", err, h)
		}
	})
}

// TestGitHubSoftFailures checks that a download or listing that fails
// after retries is reported and does not stop the rest.
func TestGitHubSoftFailures(t *testing.T) {
	s, repo := newFake(t)
	var runs []ghfake.Run
	var arts []ghfake.Artifact
	for i := range 3 {
		r := repo.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		runs = append(runs, r)
		arts = append(arts, repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": junitDoc(0, []string{"a"})}}))
	}
	s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Path: fmt.Sprintf("/artifacts/octo/app/%d.zip", arts[0].ID), Times: -1, Kind: ghfake.ServerError, Status: 503})
	s.Inject(ghfake.Fault{Path: fmt.Sprintf("/repos/octo/app/actions/runs/%d/artifacts", runs[1].ID), Times: -1, Kind: ghfake.ServerError})
	h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo})
	if err != nil {
		t.Fatal(err)
	}
	got := skippedMap(h)
	if msg := got[fmt.Sprintf("run %d attempt 1 / junit-x", runs[0].ID)]; !strings.HasPrefix(msg, "download failed: ") || !strings.Contains(msg, "503") {
		t.Errorf("failed download: %q", msg)
	}
	if msg := got[fmt.Sprintf("run %d attempt 1", runs[1].ID)]; !strings.HasPrefix(msg, "artifacts not listed: ") || !strings.Contains(msg, "502") {
		t.Errorf("failed listing: %q", msg)
	}
	if len(h.Runs) != 1 || h.Runs[0].RunID != fmt.Sprint(runs[2].ID) {
		t.Errorf("runs %v, want only run %d", runKeys(h), runs[2].ID)
	}
	// A later collection may read them: they are not settled.
	if len(st.NoResults) != 0 {
		t.Errorf("runs that failed are reported as without results: %v", st.NoResults)
	}
}

// rewriteArtifacts changes fields of artifacts in a listing, by name.
func rewriteArtifacts(t testing.TB, body []byte, by map[string]map[string]any) []byte {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("artifact listing: %v", err)
		return body
	}
	list, _ := v["artifacts"].([]any)
	for _, a := range list {
		m := a.(map[string]any)
		for k, val := range by[m["name"].(string)] {
			m[k] = val
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Errorf("artifact listing: %v", err)
		return body
	}
	return out
}

// runsOfOneTest is a fake repository with n runs a minute apart, each with
// one JUnit artifact of one passing test, and a client for it.
func runsOfOneTest(t *testing.T, n int) (*ghfake.Server, *ghapi.Client) {
	t.Helper()
	s, repo := newFake(t)
	for i := range n {
		r := repo.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": junitDoc(0, []string{"a"})}})
	}
	return s, newClient(t, s)
}

// TestGitHubUnarchivedArtifacts reads artifacts uploaded with
// upload-artifact's "archive: false" (v7): GitHub serves the one file as it
// is, named by the artifact, where it serves a zip. An .xml file is one
// document, a leg of its run named without the extension; anything else
// is left out, saying why.
func TestGitHubUnarchivedArtifacts(t *testing.T) {
	s, repo := newFake(t)
	run := repo.AddRun(ghfake.Run{CreatedAt: t0})
	for _, a := range []ghfake.Artifact{
		{Name: "junit-linux.xml", Raw: junitDoc(0, []string{"one", "!two"})},
		{Name: "junit-windows.xml", Raw: junitDoc(0, []string{"one", "two"})},
		{Name: "junit-zipped", Files: map[string][]byte{"TEST.xml": junitDoc(0, []string{"three"})}},
		{Name: "junit-notes.txt", Raw: []byte("all passed")},
		{Name: "junit-big.xml", Raw: junitDoc(0, slices.Repeat([]string{"many"}, 200))},
	} {
		a.RunID = run.ID
		repo.AddArtifact(a)
	}
	lim := ZipLimits{Entry: 4 << 10}
	h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Match: matchJUnit, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, tc := range h.Tests {
		tests = append(tests, tc.ID)
	}
	// The two files are the run's legs, named as the artifacts without .xml.
	wantTests := []string{"pkg::one [junit-linux]", "pkg::one [junit-windows]", "pkg::three", "pkg::two [junit-linux]", "pkg::two [junit-windows]"}
	if !slices.Equal(tests, wantTests) {
		t.Errorf("tests %q, want %q", tests, wantTests)
	}
	p := fmt.Sprintf("run %d attempt 1 / ", run.ID)
	big := len(junitDoc(0, slices.Repeat([]string{"many"}, 200)))
	wantSkipped := map[string]string{
		p + "junit-notes.txt": "not a zip archive, and not one .xml file (an artifact uploaded with archive: false is read when its name ends in .xml)",
		p + "junit-big.xml":   fmt.Sprintf("unarchived artifact of %d bytes, over the cap of 4096 bytes per document: not read", big),
	}
	if diff := cmp.Diff(wantSkipped, skippedMap(h)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(h.Runs) != 1 || h.Runs[0].Tests != 5 || h.Runs[0].Failed != 1 {
		t.Errorf("runs %+v, want one of 5 tests, one failed", h.Runs)
	}
	if st.Downloaded != 5 || st.Parsed != 3 || st.Entries != 3 {
		t.Errorf("stats %+v: want 5 downloaded, 3 documents read of 3 entries", st)
	}
}

// TestGitHubShortDownloadReadAgain: an artifact whose download ended early
// with no error (no Content-Length to hold it to) is not a zip; with fewer
// bytes than GitHub lists, the run is partial, read again by the next
// collection, not counted as read for good.
func TestGitHubShortDownloadReadAgain(t *testing.T) {
	s, repo := newFake(t)
	run := repo.AddRun(ghfake.Run{CreatedAt: t0})
	whole, err := ghfake.ZipFiles(map[string][]byte{"TEST.xml": junitDoc(0, []string{"a", "b"})})
	if err != nil {
		t.Fatal(err)
	}
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-cut", Zip: whole[:len(whole)/2]})
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-other", Files: map[string][]byte{"TEST.xml": junitDoc(0, []string{"c"})}})
	s.SetResponseHook(func(method, p string, status int, body []byte) []byte {
		if !strings.HasSuffix(p, "/artifacts") {
			return body
		}
		return rewriteArtifacts(t, body, map[string]map[string]any{"junit-cut": {"size_in_bytes": len(whole)}})
	})
	h, _, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf("run %d attempt 1 / junit-cut", run.ID)
	if msg := skippedMap(h)[p]; !strings.Contains(msg, fmt.Sprintf("%d of the %d bytes GitHub lists were downloaded", len(whole)/2, len(whole))) || !strings.Contains(msg, "read again next time") {
		t.Errorf("skipped %q: %q", p, msg)
	}
	// A second artifact that was read keeps the run in the history: it
	// must be partial, so the next collection reads it again.
	if len(h.Runs) != 1 || !h.Runs[0].Partial {
		t.Errorf("runs %+v: want one, partial, to be read again", h.Runs)
	}
}

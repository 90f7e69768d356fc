package cli

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeShards writes 5 repetitions a side of a suite of 4 shards of 10
// tests (tests.test_sS::test_I), each repetition as a file per shard
// (side/rep-K/shard-S/junit.xml) or, with one, as one file
// (side/rep-K.xml) holding the same cases. fail(side, k, s, i) fails a
// test, drop(side, s, i) leaves it out of every run of a side, and
// crashed(side, k, s) leaves out a shard's file. Head's shard 3 holds a
// new test, test_new.
func writeShards(t *testing.T, dir string, one bool, fail func(side string, k, s, i int) bool, drop func(side string, s, i int) bool, crashed func(side string, k, s int) bool) {
	t.Helper()
	write := func(p string, cases []string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(`<testsuite name="pytest">`+strings.Join(cases, "")+`</testsuite>`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, side := range []string{"base", "head"} {
		for k := 1; k <= 5; k++ {
			var all []string
			for s := 1; s <= 4; s++ {
				if crashed(side, k, s) {
					continue
				}
				var cases []string
				for i := range 10 {
					if drop(side, s, i) {
						continue
					}
					c := fmt.Sprintf(`<testcase classname="tests.test_s%d" name="test_%d"/>`, s, i)
					if fail(side, k, s, i) {
						c = fmt.Sprintf(`<testcase classname="tests.test_s%d" name="test_%d"><failure message="boom"/></testcase>`, s, i)
					}
					cases = append(cases, c)
				}
				if side == "head" && s == 3 {
					// The patch adds a test, so that the count does not drop.
					cases = append(cases, `<testcase classname="tests.test_s3" name="test_new"/>`)
				}
				if one {
					all = append(all, cases...)
				} else {
					write(filepath.Join(dir, side, fmt.Sprintf("rep-%d", k), fmt.Sprintf("shard-%d", s), "junit.xml"), cases)
				}
			}
			if one {
				write(filepath.Join(dir, side, fmt.Sprintf("rep-%d.xml", k)), all)
			}
		}
	}
}

// TestGateCLIShardedRepetitions: a suite run in 4 shards, each writing its
// own JUnit file, 5 repetitions a side in a directory each
// (rep-K/shard-S/junit.xml, as a matrix of shard jobs gives them), reads
// as 5 runs a side, and gets the verdict the same results get as one file
// per repetition. Read as a run a file, as before, a regression in one
// shard (6 of its 10 tests fail in every head run) was left out as an
// infrastructure failure, inconclusive, exit 0; a deleted test red on
// base passed, as missing from 15 of 20 base runs (an unstable id); and
// a shard that crashed in 3 head runs passed without a word.
func TestGateCLIShardedRepetitions(t *testing.T) {
	never := func(string, int, int, int) bool { return false }
	keep := func(string, int, int) bool { return false }
	complete := func(string, int, int) bool { return false }
	for _, tc := range []struct {
		name    string
		fail    func(side string, k, s, i int) bool
		drop    func(side string, s, i int) bool
		crashed func(side string, k, s int) bool
		code    int
		verdict string
		say     []string // on standard output, both layouts
	}{
		{"regression in one shard", func(side string, k, s, i int) bool { return side == "head" && s == 2 && i < 6 }, keep, complete, 1, "block",
			[]string{"tests.test_s2::test_0: regression: 5 of 5 head runs failed", "tests.test_s2::test_5: regression"}},
		{"red test deleted", func(side string, k, s, i int) bool { return side == "base" && s == 3 && i == 4 },
			func(side string, s, i int) bool { return side == "head" && s == 3 && i == 4 }, complete, 1, "block",
			[]string{"tests.test_s3::test_4: removed: red on base (5 of 5 runs failed)", "property red-test-removed: tests.test_s3::test_4"}},
		{"shard crashed in 3 head runs", never, keep, func(side string, k, s int) bool { return side == "head" && s == 2 && k >= 2 && k <= 4 }, 0, "inconclusive",
			[]string{"10 test(s) collected in every base run have no result in some head runs (tests.test_s2::test_0 in 2 of 5)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, one := range []bool{true, false} {
				dir := t.TempDir()
				writeShards(t, dir, one, tc.fail, tc.drop, tc.crashed)
				r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"))
				if r.code != tc.code || !strings.HasPrefix(r.stdout, "verdict: "+tc.verdict+"\n") {
					t.Errorf("one file a repetition %v: exit %d, want %d, verdict %s\n%s%s", one, r.code, tc.code, tc.verdict, r.stdout, r.stderr)
				}
				for _, s := range tc.say {
					if !strings.Contains(r.stdout, s) {
						t.Errorf("one file a repetition %v: output does not say %q:\n%s", one, s, r.stdout)
					}
				}
				joined := "--head: 20 files read as 5 runs, 4 files each (" + filepath.Join(dir, "head", "rep-1")
				if tc.name == "shard crashed in 3 head runs" {
					joined = "--head: 17 files read as 5 runs, 3 to 4 files each ("
				}
				if said := strings.Contains(r.stderr, "flakegate: "+joined) && strings.Contains(r.stdout, joined); said == one {
					t.Errorf("one file a repetition %v: joined files said on stderr and in the reasons: %v, want %v\n%s%s", one, said, !one, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestGateCLIOneFilePerRepetition: the layout flakegate matrix writes and
// the README documents, results/base-N.xml and results/head-N.xml in one
// directory, reads as before: each file a run (the files share their
// tests), so a head file in which every test failed is one head run left
// out as an outage, and nothing is joined or warned of.
func TestGateCLIOneFilePerRepetition(t *testing.T) {
	dir := t.TempDir()
	writeRep := func(name string, failing func(i int) bool) {
		var b strings.Builder
		b.WriteString(`<testsuite name="pytest">`)
		for i := range 10 {
			if failing(i) {
				fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="test_%d"><failure message="boom"/></testcase>`, i)
			} else {
				fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="test_%d"/>`, i)
			}
		}
		b.WriteString(`</testsuite>`)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k <= 5; k++ {
		writeRep(fmt.Sprintf("base-%d.xml", k), func(int) bool { return false })
		writeRep(fmt.Sprintf("head-%d.xml", k), func(i int) bool { return k == 2 || i == 0 && k >= 3 })
	}
	r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base-*.xml"), "--head", filepath.Join(dir, "head-*.xml"))
	for _, want := range []string{"head run 2 of 5 (" + filepath.Join(dir, "head-2.xml") + ") failed 10 of 10 tests", "tests.test_app::test_0", "head 3/4 failed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "files read as") || strings.Contains(r.stdout+r.stderr, "have no result in some head runs") || strings.Contains(r.stderr, "warning") {
		t.Errorf("files joined, or runs said missing, in the documented layout:\n%s%s", r.stdout, r.stderr)
	}
	// The same files named by "{a,b}" patterns: the comma inside braces
	// belongs to the pattern, not to the flag's list.
	braces := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base-{1,2,3,4,5}.xml"), "--head", filepath.Join(dir, "head-{1,2,3}.xml")+","+filepath.Join(dir, "head-{4,5}.xml"))
	if braces.stdout != r.stdout {
		t.Errorf("the same files named by brace patterns read differently:\n%s%s\nwant:\n%s", braces.stdout, braces.stderr, r.stdout)
	}
}

// TestGateCLIRandomIDs: a suite of one property test whose name holds its
// random seed, run five times on each side, one file a run. No test id
// repeats across a side's files, as with one repetition's shards; the
// files are still five runs each (one group is the whole side, which is
// never joined), so the ids are unstable, not removed: a pass. Joined into
// one run, each id read as collected in every base run and removed on
// head: five blocks on a clean PR.
func TestGateCLIRandomIDs(t *testing.T) {
	dir := t.TempDir()
	for _, side := range []string{"base", "head"} {
		os.MkdirAll(filepath.Join(dir, side), 0o755)
		for i := 1; i <= 5; i++ {
			doc := fmt.Sprintf(`<testsuite name="pytest"><testcase classname="t" name="test_prop[seed=%s%d]"/></testsuite>`, side, i)
			os.WriteFile(filepath.Join(dir, side, fmt.Sprintf("%s-%d.xml", side, i)), []byte(doc), 0o644)
		}
	}
	r := run(t, nil, "gate", "--base", filepath.Join(dir, "base", "*.xml"), "--head", filepath.Join(dir, "head", "*.xml"))
	if r.code != 0 || strings.Contains(r.stdout, "bucket: removed") || strings.Contains(r.stderr, "read as one run") {
		t.Errorf("exit %d, want a pass with the ids unstable:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestGateCLIOneHeadRepetition: base is 5 repetitions of 4 shards, head one
// repetition of the same 4 shards. Head alone is one group (which JoinParts
// does not join, see TestGateCLIRandomIDs), but base shows the layout, so
// head's shards are one run too: a clean head passes, and a shard whose
// tests all fail on head counts against them (one head run: undecided,
// more runs wanted), where read as four runs the clean head was
// inconclusive ("no result in some head runs") and the failing shard was
// set aside as an outage.
func TestGateCLIOneHeadRepetition(t *testing.T) {
	never := func(string, int, int, int) bool { return false }
	keep := func(string, int, int) bool { return false }
	for _, tc := range []struct {
		name string
		fail func(side string, k, s, i int) bool
		code int
		want string
	}{
		{"clean", never, 0, "verdict: pass"},
		{"shard 2 regresses on head", func(side string, k, s, i int) bool { return side == "head" && s == 2 }, 0, "inconclusive tests.test_s2::test_9 (more runs wanted)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeShards(t, dir, false, tc.fail, keep, func(string, int, int) bool { return false })
			for k := 2; k <= 5; k++ {
				os.RemoveAll(filepath.Join(dir, "head", fmt.Sprintf("rep-%d", k)))
			}
			r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"))
			if r.code != tc.code || !strings.Contains(r.stdout, tc.want) || !strings.Contains(r.stderr, "--head: 4 files read as one run") {
				t.Errorf("exit %d, want %d and %q, head's shards one run:\n%s%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}

// TestGateCLINotResults: CI jobs write other XML beside their JUnit reports
// (Maven Failsafe's failsafe-summary.xml beside TEST-*.xml, coverage.xml
// beside junit.xml, JaCoCo's report, TestNG's own testng-results.xml beside
// Surefire's), and a pattern for the directory takes it. It holds no
// results: it is listed, and the evidence is whole (before: "could not be
// read", inconclusive on every PR). Another tool's own results, and a file
// of a kind not known, stay unread.
func TestGateCLINotResults(t *testing.T) {
	for _, tc := range []struct {
		name, file, doc, verdict, note string
		report                         string // the JUnit file's name, default TEST-it.CartIT.xml
	}{
		{"Failsafe summary", "failsafe-summary.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<failsafe-summary result=\"254\" timeout=\"false\"><completed>2</completed><errors>0</errors><failures>0</failures><skipped>0</skipped><failureMessage xsi:nil=\"true\" /></failsafe-summary>\n",
			"verdict: pass", "Maven Failsafe's summary", ""},
		{"coverage.py", "coverage.xml", "<?xml version=\"1.0\" ?>\n<coverage version=\"7.4.1\" timestamp=\"1700000000\" line-rate=\"0.9\">\n\t<!-- Generated by coverage.py: https://coverage.readthedocs.io/en/7.4.1 -->\n\t<sources/><packages/>\n</coverage>\n",
			"verdict: pass", "a coverage report", ""},
		{"JaCoCo", "jacocoTestReport.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="app"><counter type="LINE" missed="3" covered="9"/></report>`,
			"verdict: pass", "a JaCoCo coverage report", ""},
		// TestNG's own report holds its results; beside Surefire's report
		// of a TestNG run (TEST-TestSuite.xml) it holds them again.
		{"TestNG", "testng-results.xml", `<?xml version="1.0" encoding="UTF-8"?><testng-results ignored="0" total="2" passed="2" failed="0" skipped="0"><suite name="it"/></testng-results>`,
			"verdict: pass", "TestNG's own report", "TEST-TestSuite.xml"},
		{"TestNG's report alone", "testng-results.xml", `<?xml version="1.0" encoding="UTF-8"?><testng-results ignored="0" total="2" passed="2" failed="0" skipped="0"><suite name="it"/></testng-results>`,
			"verdict: block", "TestNG's own report", ""},
		{"testng-failed.xml", "testng-failed.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE suite SYSTEM \"https://testng.org/testng-1.0.dtd\">\n<suite name=\"Failed suite [Suite]\"><test name=\"Test(failed)\"/></suite>\n",
			"verdict: pass", "a TestNG suite definition", ""},
		// Robot Framework's output.xml holds results of its own, which the
		// JUnit file beside it does not: unread, and the gate does not pass
		// on what it did not read (a Robot test failing on head only): a
		// head file not read fails the check, whatever on-inconclusive says.
		{"Robot Framework", "output.xml", `<?xml version="1.0" encoding="UTF-8"?><robot generator="Robot 7.0"><suite name="Login"><test name="Valid Login"><status status="PASS"/></test></suite></robot>`,
			"verdict: block", "Robot Framework's output.xml", ""},
		{"unknown", "sitemap.xml", `<urlset><url/></urlset>`, "verdict: block", "head result file(s) or run(s) were not read", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, side := range []string{"base", "head"} {
				for k := 1; k <= 3; k++ {
					d := filepath.Join(dir, side, fmt.Sprintf("rep-%d", k), "reports")
					os.MkdirAll(d, 0o755)
					os.WriteFile(filepath.Join(d, cmp.Or(tc.report, "TEST-it.CartIT.xml")), []byte(`<testsuite name="it.CartIT"><testcase classname="it.CartIT" name="adds"/><testcase classname="it.CartIT" name="removes"/></testsuite>`), 0o644)
					os.WriteFile(filepath.Join(d, tc.file), []byte(tc.doc), 0o644)
				}
			}
			r := run(t, nil, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"))
			code := 0
			if tc.verdict == "verdict: block" {
				code = 1
			}
			if r.code != code || !strings.Contains(r.stdout, tc.verdict) || !strings.Contains(r.stdout, tc.note) || !strings.Contains(r.stderr, "skipped") {
				t.Errorf("exit %d, want %q saying %q, the files listed as skipped:\n%s%s", r.code, tc.verdict, tc.note, r.stdout, r.stderr)
			}
		})
	}
}

// TestGateCLIHeadPatternMatchingNothing: a second --head pattern that
// matches no file blocks (a failure in files not read would go unseen), and
// the reason says to fix the pattern: it said to re-run, which matches no
// better.
func TestGateCLIHeadPatternMatchingNothing(t *testing.T) {
	dir := t.TempDir()
	for _, side := range []string{"base", "head"} {
		for k := 1; k <= 3; k++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.xml", side, k)), []byte(`<testsuite name="s"><testcase classname="c" name="t"/></testsuite>`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base-*.xml"), "--head", filepath.Join(dir, "head-*.xml"), "--head", filepath.Join(dir, "shards/**/head-*.xml"))
	if want := "a head pattern or path that matched no file, which a re-run matches no better: fix it (--head, head-results) or drop it"; r.code != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d; want a block saying %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

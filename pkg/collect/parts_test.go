package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJoinParts: which files of a gate's side JoinParts reads as one run,
// by layout, three repetitions a side of a suite of two shards (s1, s2),
// each shard a file. Files in a directory that do not repeat each other
// are parts of the highest such directory's run; files that share most of
// their tests, as repetitions do, stay one run each, as before; files that state a run
// id are left as they are. Fragments warns of a side whose files could
// not be told apart.
func TestJoinParts(t *testing.T) {
	// shard is a JUnit file of shard s (its own tests), with properties.
	shard := func(props string, s ...int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuite name="x">%s`, props)
		for _, s := range s {
			for i := range 3 {
				fmt.Fprintf(&b, `<testcase classname="tests.s%d" name="t%d"/>`, s, i)
			}
		}
		return b.String() + `</testsuite>`
	}
	runID := func(k int) string {
		return fmt.Sprintf(`<properties><property name="run_id" value="%d"/></properties>`, k)
	}
	commit := func(sha string) string {
		return fmt.Sprintf(`<properties><property name="commit_sha" value="%s"/></properties>`, sha)
	}
	reps := func(f func(k int) map[string]string) map[string]string {
		out := map[string]string{}
		for k := 1; k <= 3; k++ {
			for p, doc := range f(k) {
				out[p] = doc
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		runs    []string // the runs' sources, relative, in order
		note    string   // in JoinParts' note; "" for none
		warning bool     // Fragments warns
	}{
		{"shards, a directory a repetition", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/shard-1/junit.xml", k): shard("", 1), fmt.Sprintf("rep-%d/shard-2/junit.xml", k): shard("", 2)}
		}), []string{"rep-1", "rep-2", "rep-3"}, "6 files read as 3 runs, 2 files each (rep-1, rep-2, … 1 more)", false},
		{"a file per class, a directory a repetition", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("head-%d/TEST-tests.s1.xml", k): shard("", 1), fmt.Sprintf("head-%d/TEST-tests.s2.xml", k): shard("", 2)}
		}), []string{"head-1", "head-2", "head-3"}, "6 files read as 3 runs", false},
		// One group is the whole side: one sharded repetition, or
		// repetitions whose ids are all random, which share no test
		// either. Read as before, with the warning.
		{"one repetition, two shards", map[string]string{"shard-1.xml": shard("", 1), "shard-2.xml": shard("", 2)}, []string{"shard-1.xml", "shard-2.xml"}, "", true},
		{"repetitions of random ids", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("base-%d.xml", k): shard("", 10+k)}
		}), []string{"base-1.xml", "base-2.xml", "base-3.xml"}, "", true},
		// Two specs whose tests have the same titles: a few tests held
		// twice do not make the files repetitions.
		{"parts sharing a few titles", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/a.xml", k): shard("", 1, 2, 9), fmt.Sprintf("rep-%d/b.xml", k): shard("", 3, 4, 9)}
		}), []string{"rep-1", "rep-2", "rep-3"}, "6 files read as 3 runs", false},
		// Two specs of a repetition with mostly the same titles (two of its
		// four files): still parts of it.
		{"two parts sharing most titles", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/a.xml", k): shard("", 1, 2), fmt.Sprintf("rep-%d/b.xml", k): shard("", 1, 2, 3),
				fmt.Sprintf("rep-%d/c.xml", k): shard("", 4), fmt.Sprintf("rep-%d/d.xml", k): shard("", 5)}
		}), []string{"rep-1", "rep-2", "rep-3"}, "12 files read as 3 runs", false},
		// Repetitions whose files hold a random id beside their stable
		// tests still repeat each other: rep-N is a run each, and one file
		// a repetition stays a run each.
		{"shards with random ids", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/shard-1/junit.xml", k): shard("", 1, 3, 100+k), fmt.Sprintf("rep-%d/shard-2/junit.xml", k): shard("", 2, 4, 200+k)}
		}), []string{"rep-1", "rep-2", "rep-3"}, "6 files read as 3 runs", false},
		{"a file a repetition with random ids", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("head-%d.xml", k): shard("", 1, 2, 100+k)}
		}), []string{"head-1.xml", "head-2.xml", "head-3.xml"}, "", false},
		// Bazel keeps a target's failed attempts beside its test.xml: parts
		// of the repetition's run, where they held the target's tests twice.
		{"Bazel attempts", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/t/test.xml", k): shard("", 1, 2), fmt.Sprintf("rep-%d/t/test_attempts/attempt_1.xml", k): shard("", 1, 2),
				fmt.Sprintf("rep-%d/u/test.xml", k): shard("", 3)}
		}), []string{"rep-1", "rep-2", "rep-3"}, "9 files read as 3 runs", false},
		// Bazel's --runs_per_test=3: run N of every target, sharded or
		// not, is one run.
		{"Bazel runs_per_test", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("t/run_%d_of_3/test.xml", k): shard("", 1, 2),
				fmt.Sprintf("u/shard_1_of_2_run_%d_of_3/test.xml", k): shard("", 3), fmt.Sprintf("u/shard_2_of_2_run_%d_of_3/test.xml", k): shard("", 4)}
		}), []string{"run_1_of_3", "run_2_of_3", "run_3_of_3"}, "9 files read as 3 runs", false},
		// Three invocations (a repetition each) of --runs_per_test=2: run
		// N of one invocation is not run N of another.
		{"Bazel runs_per_test, several invocations", reps(func(k int) map[string]string {
			out := map[string]string{}
			for n := 1; n <= 2; n++ {
				out[fmt.Sprintf("rep-%d/bazel-testlogs/t/run_%d_of_2/test.xml", k, n)] = shard("", 1)
				out[fmt.Sprintf("rep-%d/bazel-testlogs/u/run_%d_of_2/test.xml", k, n)] = shard("", 2)
			}
			return out
		}), []string{"rep-1/bazel-testlogs/run_1_of_2", "rep-1/bazel-testlogs/run_2_of_2", "rep-2/bazel-testlogs/run_1_of_2", "rep-2/bazel-testlogs/run_2_of_2", "rep-3/bazel-testlogs/run_1_of_2", "rep-3/bazel-testlogs/run_2_of_2"}, "12 files read as 6 runs", false},
		// Not Bazel's: a directory that only ends like one.
		{"a matrix's test_run_S_of_4", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/test_run_1_of_2/junit.xml", k): shard("", 1), fmt.Sprintf("rep-%d/test_run_2_of_2/junit.xml", k): shard("", 2)}
		}), []string{"rep-1", "rep-2", "rep-3"}, "6 files read as 3 runs", false},
		{"a file a repetition, one directory (as flakegate matrix writes)", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("head-%d.xml", k): shard("", 1, 2)}
		}), []string{"head-1.xml", "head-2.xml", "head-3.xml"}, "", false},
		{"a file a repetition, a directory each", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/junit.xml", k): shard("", 1, 2)}
		}), []string{"rep-1/junit.xml", "rep-2/junit.xml", "rep-3/junit.xml"}, "", false},
		{"run ids stated", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("rep-%d/shard-1.xml", k): shard(runID(k), 1), fmt.Sprintf("rep-%d/shard-2.xml", k): shard(runID(k), 2)}
		}), []string{"rep-1/shard-1.xml", "rep-2/shard-1.xml", "rep-3/shard-1.xml"}, "", false},
		{"parts of two commits", map[string]string{"a.xml": shard(commit("aaaa"), 1), "b.xml": shard(commit("bbbb"), 2)}, []string{"a.xml", "b.xml"}, "", true},
		// Every repetition's shards in one directory: they share tests,
		// so nothing tells which files make a run.
		{"shards of every repetition in one directory", reps(func(k int) map[string]string {
			return map[string]string{fmt.Sprintf("s1-rep-%d.xml", k): shard("", 1), fmt.Sprintf("s2-rep-%d.xml", k): shard("", 2)}
		}), []string{"s1-rep-1.xml", "s1-rep-2.xml", "s1-rep-3.xml", "s2-rep-1.xml", "s2-rep-2.xml", "s2-rep-3.xml"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, doc := range tc.files {
				p = filepath.Join(dir, p)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			h, err := Load(context.Background(), "", []string{dir}, 1)
			if err != nil {
				t.Fatal(err)
			}
			got, note := JoinParts("head-results", h, false)
			var runs []string
			for _, r := range got.Runs {
				rel, _ := filepath.Rel(dir, r.Source)
				runs = append(runs, filepath.ToSlash(rel))
			}
			if diff := cmp.Diff(tc.runs, runs); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			note = strings.ReplaceAll(note, dir+string(filepath.Separator), "")
			note = strings.ReplaceAll(note, dir, ".")
			if tc.note == "" && note != "" || !strings.Contains(note, tc.note) {
				t.Errorf("note %q, want %q", note, tc.note)
			}
			if w := Fragments("head-results", got); (w != "") != tc.warning {
				t.Errorf("Fragments = %q, want a warning: %v", w, tc.warning)
			}
		})
	}
}

// TestJoinPartsManyPairs: past maxPairWork pairs of files, a test held
// twice marks where its files meet; shards of repetitions are still a run
// per repetition, and one file a repetition a run each.
func TestJoinPartsManyPairs(t *testing.T) {
	defer func(n int) { maxPairWork = n }(maxPairWork)
	maxPairWork = 0
	dir := t.TempDir()
	for k := 1; k <= 3; k++ {
		for s := 1; s <= 2; s++ {
			p := filepath.Join(dir, "sharded", fmt.Sprintf("rep-%d", k), fmt.Sprintf("shard-%d.xml", s))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf(`<testsuite name="x"><testcase classname="s%d" name="a"/><testcase classname="s%d" name="b"/></testsuite>`, s, s)), 0o644)
		}
		p := filepath.Join(dir, "flat", fmt.Sprintf("head-%d.xml", k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`<testsuite name="x"><testcase classname="s1" name="a"/><testcase classname="s2" name="a"/></testsuite>`), 0o644)
	}
	for sub, want := range map[string]int{"sharded": 3, "flat": 3} {
		h, err := Load(context.Background(), "", []string{filepath.Join(dir, sub)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if h, _ = JoinParts("head-results", h, false); len(h.Runs) != want {
			t.Errorf("%s: %d runs, want %d", sub, len(h.Runs), want)
		}
	}
}

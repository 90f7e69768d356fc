package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAnalyzeWriterHistories: for each writer of fixtures/junit-writers,
// ten runs of its sample, the flaky test failing in runs 3, 6 and 9
// (junit-flaky.xml) and passing in the others. analyze flags exactly that
// test, whether the runs share a commit (--commit-sha, "same-commit"
// evidence) or each states its own (Bun's commit property, Robot
// Framework's --metadata commit_sha), and nothing else: the tests that
// fail in every run are broken, not flaky. Karma's runs change browser
// version halfway, which before gave every test a new id.
func TestAnalyzeWriterHistories(t *testing.T) {
	const dir = "../../fixtures/junit-writers"
	for _, tc := range []struct {
		tool, pass, flaky, test string
		ownCommits              bool
		upgrade                 [2]string // the browser version karma's runs 6 to 10 have
	}{
		{tool: "node", test: "Math.Multiplication::is flaky"},
		{tool: "bun", test: "Multiplication > Math::is flaky", ownCommits: true},
		{tool: "deno", test: "./test/math_test.ts::Math > Multiplication > is flaky"},
		{tool: "dart", test: "test.math::Math Multiplication is flaky"},
		{tool: "karma", test: "Chrome_Headless_(Linux_x86_64).Math Multiplication::Math Multiplication is flaky",
			upgrade: [2]string{"124.0.6367.60", "125.0.6422.60"}},
		{tool: "robot", pass: "xunit.xml", flaky: "xunit-flaky.xml", test: "Tests.Math::Is Flaky", ownCommits: true},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if tc.pass == "" {
				tc.pass, tc.flaky = "junit.xml", "junit-flaky.xml"
			}
			runs := t.TempDir()
			for i := 1; i <= 10; i++ {
				name := tc.pass
				if i%3 == 0 {
					name = tc.flaky
				}
				b, err := os.ReadFile(filepath.Join(dir, tc.tool, name))
				if err != nil {
					t.Fatal(err)
				}
				doc := string(b)
				// Each run its own commit and run id, where the file states them.
				doc = strings.ReplaceAll(doc, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", fmt.Sprintf("%040x", 0xabc000+i))
				doc = strings.ReplaceAll(doc, `"12345678"`, fmt.Sprintf(`"1234567%d"`, i))
				if v := tc.upgrade; v[0] != "" && i > 5 {
					under := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
					doc = strings.ReplaceAll(strings.ReplaceAll(doc, v[0], v[1]), under(v[0]), under(v[1]))
				}
				if err := os.WriteFile(filepath.Join(runs, fmt.Sprintf("run-%d.xml", i)), []byte(doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			modes := [][]string{{"--commit-sha", "1111111111111111111111111111111111111111", "--min-commits", "1"}}
			if tc.ownCommits {
				modes = append(modes, nil)
			}
			for _, args := range modes {
				r := run(t, fixedClock, append(append([]string{"analyze", "--format", "json"}, args...), runs)...)
				if r.code != 0 {
					t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
				}
				var rep struct {
					Runs    int `json:"runs"`
					Commits []struct{ SHA string }
					Tests   []struct {
						Name    string
						IsFlaky bool `json:"is_flaky"`
					}
				}
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
					t.Fatal(err)
				}
				var flaky []string
				for _, x := range rep.Tests {
					if x.IsFlaky {
						flaky = append(flaky, x.Name)
					}
				}
				if !slices.Equal(flaky, []string{tc.test}) || rep.Runs != 10 {
					t.Errorf("%v: %d runs, flagged %q; want 10 runs, [%q]", args, rep.Runs, flaky, tc.test)
				}
				if args == nil && len(rep.Commits) != 10 {
					t.Errorf("the files' own commits: %d, want 10", len(rep.Commits))
				}
			}
		})
	}
}

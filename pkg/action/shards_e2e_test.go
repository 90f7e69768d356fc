package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestGateShardedResults: base-results and head-results holding 4 shard
// files a repetition (results/SIDE/rep-K/shard-S/junit.xml, as a final
// job that downloads a matrix of shard jobs' results gives them), 5
// repetitions a side, read as 5 runs a side, which a notice, the reasons
// in the summary and gate.json say. A patch that breaks 6 of shard 2's 10
// tests in every head run blocks; read as a run a file, as before, each
// of its shard 2 files was left out as an infrastructure failure: exit 0,
// inconclusive, 0 failed. A shard 2 that wrote no file in 3 head runs
// leaves its tests' evidence partial: inconclusive, where it passed
// without a word.
func TestGateShardedResults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    func(sh, i int) bool // on head
		crashed func(k, sh int) bool // on head
		code    int
		out     map[string]string
		say     string // in the summary
	}{
		{"regression in one shard", func(sh, i int) bool { return sh == 2 && i < 6 }, func(int, int) bool { return false }, 1,
			map[string]string{"verdict": "block", "blocking-count": "6", "failed-count": "6"}, "tests.test\\_s2::test\\_0 | regression | 0/5 | 5/5"},
		{"shard crashed in 3 head runs", func(int, int) bool { return false }, func(k, sh int) bool { return sh == 2 && k >= 2 && k <= 4 }, 0,
			map[string]string{"verdict": "inconclusive", "blocking-count": "0"}, "10 test(s) collected in every base run have no result in some head runs (tests.test\\_s2::test\\_0 in 2 of 5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "")
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
			r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{
				"mode": "gate", "base-results": "results/base/**/*.xml", "head-results": "results/head/**/*.xml", "upload-artifact": "false"})
			ws := r.env["GITHUB_WORKSPACE"]
			for _, side := range []string{"base", "head"} {
				for k := 1; k <= 5; k++ {
					for sh := 1; sh <= 4; sh++ {
						if side == "head" && tc.crashed(k, sh) {
							continue
						}
						var b strings.Builder
						fmt.Fprintf(&b, `<?xml version="1.0"?><testsuites name="pytest tests"><testsuite name="pytest">`)
						for i := range 10 {
							if side == "head" && tc.fail(sh, i) {
								fmt.Fprintf(&b, `<testcase classname="tests.test_s%d" name="test_%d"><failure message="boom"/></testcase>`, sh, i)
							} else {
								fmt.Fprintf(&b, `<testcase classname="tests.test_s%d" name="test_%d"/>`, sh, i)
							}
						}
						b.WriteString(`</testsuite></testsuites>`)
						p := filepath.Join(ws, "results", side, fmt.Sprintf("rep-%d", k), fmt.Sprintf("shard-%d", sh), "junit.xml")
						os.MkdirAll(filepath.Dir(p), 0o755)
						if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			code := r.run()
			out := r.outputs()
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for k, v := range tc.out {
				if out[k] != v {
					t.Errorf("output %s = %q, want %q", k, out[k], v)
				}
			}
			sum := r.summary()
			joined := "base-results: 20 files read as 5 runs, 4 files each (" + filepath.Join(ws, "results/base/rep-1")
			if !strings.Contains(sum, tc.say) || !strings.Contains(sum, strings.ReplaceAll(joined, "_", "\\_")) {
				t.Errorf("summary does not say %q and %q:\n%s", tc.say, joined, sum)
			}
			if log := r.stdout.String(); !strings.Contains(log, "::notice::"+joined) {
				t.Errorf("no notice %q:\n%s", joined, log)
			}
			if b, _ := os.ReadFile(r.file("report-json")); !strings.Contains(string(b), "files read as 5 runs") {
				t.Errorf("gate.json's reasons do not say the files were joined")
			}
		})
	}
}

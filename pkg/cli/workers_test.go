package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestAnalyzeSameWhateverWorkers: the report of a history whose runs are
// each written as several files (a file per class, and a file of reruns)
// is byte for byte the same whatever the number of workers reading it. The
// files of one run state different timestamps, a test appears in two files
// of a run with different lines and with failure messages of one
// signature, runs are named in another order than their times, and one
// run is an infrastructure failure, which the report lists by its source.
func TestAnalyzeSameWhateverWorkers(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	for run := 1; run <= 12; run++ {
		for f, name := range []string{"TEST-a.xml", "TEST-b.xml", fmt.Sprintf("reruns-%d.xml", 13-run)} {
			var body string
			for k := range 6 {
				outcome := ""
				v := rng.IntN(6)
				if run == 6 {
					v = 0 // an outage: the report names the run by its source
				}
				switch v {
				case 0:
					outcome = fmt.Sprintf(`<failure message="timeout at 0x%x" type="E"/>`, rng.IntN(1<<16))
				case 1:
					outcome = `<skipped/>`
				}
				body += fmt.Sprintf(`<testcase classname="k.C%d" name="t%d" file="k/c%d.py" line="%d" time="0.1">%s</testcase>`,
					k%2, k, k%2, 10+rng.IntN(3), outcome)
			}
			doc := fmt.Sprintf(`<testsuite name="%s" timestamp="2026-11-%02dT10:00:%02d"><properties>`+
				`<property name="commit_sha" value="c%02d"/><property name="run_id" value="%d"/></properties>%s</testsuite>`,
				name, 30-run, 9-3*f, (run+1)/2, 100-run, body)
			p := filepath.Join(dir, fmt.Sprintf("r%02d", run), name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var first string
	for _, w := range []string{"1", "2", "3", "8"} {
		for range 3 {
			r := run(t, fixedClock, "analyze", "--format", "json", "--threshold", "0.05", "--min-commits", "2", "--workers", w, dir)
			if r.code != 0 {
				t.Fatalf("--workers %s: exit %d: %s", w, r.code, r.stderr)
			}
			if first == "" {
				first = r.stdout
				continue
			}
			if r.stdout != first {
				t.Fatalf("--workers %s gives another report:\n%s\nthan one worker:\n%s", w, r.stdout, first)
			}
		}
	}
}

package history_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"
)

// TestPytestRerunsScored: what the score makes of pytest-rerunfailures'
// attempts (testdata/rerun). A test that failed every attempt is not a
// flake; one that failed and passed on its rerun is, by retry.
func TestPytestRerunsScored(t *testing.T) {
	for _, tc := range []struct {
		file     string
		test     string
		flaky    bool
		evidence []string
		failures int
	}{
		{"testdata/rerun/pytest-rerunfailures-16.6.1-programbench64-always-fails.xml", "test_rerun::test_always_fails", false, []string{}, 3},
		{"testdata/rerun/pytest-rerunfailures-issue170-flaky-pass-on-rerun.xml", "test_sample::test_random", true, []string{score.EvidenceRetry}, 1},
	} {
		t.Run(tc.test, func(t *testing.T) {
			src := history.Source{Name: tc.file, Open: func() (io.ReadCloser, error) { return os.Open(tc.file) },
				Default: &model.Run{CommitSHA: "abc"}}
			h, err := history.Load(context.Background(), []history.Source{src}, history.Options{})
			if err != nil || len(h.Skipped) > 0 {
				t.Fatal(err, h.Skipped)
			}
			o := score.Defaults()
			o.MinCommits = 1
			rep, err := score.Score(h, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Tests) != 1 {
				t.Fatalf("%d tests, want 1", len(rep.Tests))
			}
			got := rep.Tests[0]
			if got.Name != tc.test || got.IsFlaky != tc.flaky || got.Failures != tc.failures || !cmp.Equal(got.Evidence, tc.evidence) {
				t.Errorf("%s: flaky %v, evidence %q, failures %d; want %s: %v, %q, %d",
					got.Name, got.IsFlaky, got.Evidence, got.Failures, tc.test, tc.flaky, tc.evidence, tc.failures)
			}
		})
	}
}

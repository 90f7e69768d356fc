package junit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/model"
)

// TestDialectFixtures reads the real tool outputs of testdata/dialects,
// which the conformance corpus has no example of (see its README).
func TestDialectFixtures(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    Totals
		skipped []string
	}{
		{"googletest-1.10.0-gtest_xml_output_unittest-EXPECTED_NON_EMPTY_XML.xml",
			Totals{Testcases: 24, Passed: 17, Failed: 4, Skipped: 3},
			[]string{"MixedResultTest::DISABLED_test", "DisabledTest::DISABLED_test_not_run", "SkippedTest::Skipped"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "dialects", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var skipped []string
			got, err := NewReader().Parse(tc.file, f, func(c *Case) error {
				if c.Outcome == model.Skipped {
					skipped = append(skipped, c.ID())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

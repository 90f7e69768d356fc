package matrix

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/unicode"

	"github.com/flakegate/flakegate/pkg/model"
)

// TestWithSuite: the run's test case goes inside the root of every shape
// of report a run may leave, and the result reads as the same single run
// with one more test case, as `flakegate gate` reads a file: the report's
// run_id and commit_sha go with the case.
func TestWithSuite(t *testing.T) {
	utf16 := func(s string) string {
		b, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	props := `<properties><property name="run_id" value="77"/><property name="commit_sha" value="abc"/></properties>`
	for _, tc := range []struct{ name, doc string }{
		{"testsuite root", `<testsuite name="s"><testcase classname="c" name="a"/></testsuite>`},
		{"testsuites root, comment and PI after it", "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"s\"><testcase classname=\"c\" name=\"a\"/></testsuite></testsuites>\n<!-- end -->\n<?pi x?>\n"},
		{"empty self-closing root", "<testsuite\n name=\"s\" tests=\"0\" errors=\"1\"/>\n"},
		{"run id on the suite", `<testsuites><testsuite name="s">` + props + `<testcase classname="c" name="a"/></testsuite></testsuites>`},
		{"UTF-16", utf16("<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<testsuite name=\"s\"><testcase classname=\"c\" name=\"é\"/></testsuite>\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			before, err := readReport(ctx, "r.xml", []byte(tc.doc))
			if err != nil || before.broken != "" {
				t.Fatalf("the report does not read: %v %s", err, before.broken)
			}
			var p model.Run
			if len(before.runs) == 1 {
				p = before.runs[0].Run
			}
			out, err := withSuite([]byte(tc.doc), runSuite("exited with status 139 & <no> test", p, time.Unix(0, 0)))
			if err != nil {
				t.Fatal(err)
			}
			after, err := readReport(ctx, "r.xml", out)
			if err != nil || after.broken != "" {
				t.Fatalf("the result does not read: %v %s\n%s", err, after.broken, out)
			}
			if len(after.runs) != 1 || after.cases != before.cases+1 || after.failed != 1 {
				t.Errorf("%d runs, %d cases (before %d), %d failed: want 1 run, one more case, failing\n%s", len(after.runs), after.cases, before.cases, after.failed, out)
			}
			if tc.name == "run id on the suite" && fmt.Sprintln(after.runs[0].RunID, after.runs[0].CommitSHA) != "77 abc\n" {
				t.Errorf("run %+v, want run id 77 and commit abc", after.runs[0].Run)
			}
			if strings.HasPrefix(tc.doc, "\xff\xfe") != strings.HasPrefix(string(out), "\xff\xfe") {
				t.Errorf("the encoding changed:\n%q", out)
			}
		})
	}
}

// TestReadJUnitTooLarge: a run's file past maxJUnitBytes is refused with
// its size (a 100 MB file peaked at 519 MB of memory), not read.
func TestReadJUnitTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, maxJUnitBytes+1<<20); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	doc, missing, err := readJUnit(path)
	if err == nil || missing || doc != nil || !strings.Contains(err.Error(), "257 MiB, more than the 256 MiB matrix reads of a run's file") {
		t.Errorf("readJUnit = %d bytes, %v, %v", len(doc), missing, err)
	}
}

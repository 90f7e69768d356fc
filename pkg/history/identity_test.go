package history

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/internal/corpus"
	"github.com/flakegate/flakegate/pkg/junit"
)

func fileSource(path string) Source {
	return Source{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

func cellsByID(h *History) map[string][]Cell {
	out := map[string][]Cell{}
	for _, t := range h.Tests {
		out[t.ID] = t.Cells
	}
	return out
}

// TestIdentityFixtures: a test that one file holds under several projects
// is one test per project, named by what tells them apart; cases that
// differ in nothing stay attempts of one test. See testdata/identity.
func TestIdentityFixtures(t *testing.T) {
	const pw = "testdata/identity/playwright-two-projects.xml"
	const php = "testdata/identity/phpunit-no-classname.xml"
	const e2e = "/home/runner/work/app/app/tests/end-to-end/"
	for _, tc := range []struct {
		file  string
		cells map[string][]Cell
		files map[string]string
	}{
		{pw, map[string][]Cell{
			"tests/cart.spec.ts::cart › adds an item [chromium]":               {{Pass: 1}},
			"tests/cart.spec.ts::cart › adds an item [firefox]":                {{Pass: 1}},
			"tests/cart.spec.ts::cart › applies a coupon [chromium]":           {{Pass: 1, Fail: 1, Sig: 1}},
			"tests/cart.spec.ts::cart › applies a coupon [firefox]":            {{Pass: 1}},
			"tests/login.spec.ts::login › rejects a wrong password [chromium]": {{Pass: 1}},
			"tests/login.spec.ts::login › rejects a wrong password [firefox]":  {{Pass: 1}},
			"tests/login.spec.ts::login › remembers the session [chromium]":    {{Pass: 1}},
			"tests/login.spec.ts::login › remembers the session [firefox]":     {{Fail: 2, Sig: 2}}, // two signatures; the cell names the first failure's
		}, nil},
		{php, map[string][]Cell{
			"end-to-end::help.phpt [" + e2e + "cli/help.phpt]":                          {{Pass: 1}},
			"end-to-end::help.phpt [" + e2e + "migrate/help.phpt]":                      {{Fail: 1, Sig: 1}},
			"end-to-end::version.phpt":                                                  {{Pass: 1}},
			`App\Tests\MoneyTest::testRounding::testRounding with data set "half up"`:   {{Pass: 1}},
			`App\Tests\MoneyTest::testRounding::testRounding with data set "half even"`: {{Pass: 1}},
			`App\Tests\MoneyTest::testParse::testParse with data set "half up"`:         {{Pass: 1}},
			`App\Tests\MoneyTest::testParse::testParse with data set "half even"`:       {{Pass: 1}},
		}, map[string]string{
			"end-to-end::help.phpt [" + e2e + "migrate/help.phpt]": e2e + "migrate/help.phpt",
		}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			for _, workers := range []int{1, 2} {
				h, err := Load(context.Background(), []Source{fileSource(tc.file)}, Options{Workers: workers})
				if err != nil || len(h.Skipped) > 0 {
					t.Fatal(err, h.Skipped)
				}
				if diff := cmp.Diff(tc.cells, cellsByID(h)); diff != "" {
					t.Errorf("tests and cells (-want +got):\n%s", diff)
				}
				for _, x := range h.Tests {
					if want, ok := tc.files[x.ID]; ok && x.File != want {
						t.Errorf("%s: file %q, want %q", x.ID, x.File, want)
					}
				}
			}
		})
	}
}

// TestIdentityIsStable: the identities of a history do not depend on the
// other files read with it, on their order or on the number of workers. A
// file with one project keeps plain identities even beside files with two,
// so a team that runs one project keeps its test ids.
func TestIdentityIsStable(t *testing.T) {
	doc, err := os.ReadFile("testdata/identity/playwright-two-projects.xml")
	if err != nil {
		t.Fatal(err)
	}
	two := string(doc)
	// One project only: firefox's suites dropped, another run.
	one := strings.ReplaceAll(two, `<property name="run_id" value="7712">`, `<property name="run_id" value="7713">`)
	one = one[:strings.Index(one, `<testsuite name="tests/cart.spec.ts" timestamp="2026-11-30T10:02:11.418Z" hostname="firefox"`)] + "</testsuites>\n"
	again := strings.ReplaceAll(two, `<property name="run_id" value="7712">`, `<property name="run_id" value="7714">`)
	ids := func(srcs ...Source) []string {
		var out []string
		for _, workers := range []int{1, 3} {
			h, err := Load(context.Background(), srcs, Options{Workers: workers})
			if err != nil || len(h.Skipped) > 0 {
				t.Fatal(err, h.Skipped)
			}
			var got []string
			for _, x := range h.Tests {
				got = append(got, x.ID)
			}
			if out != nil && !cmp.Equal(out, got) {
				t.Fatalf("workers change the ids:\n%v\n%v", out, got)
			}
			out = got
		}
		return out
	}
	alone := ids(stringSource("one.xml", one))
	if len(alone) != 4 || alone[0] != "tests/cart.spec.ts::cart › adds an item" {
		t.Fatalf("one project: %q", alone)
	}
	both := ids(stringSource("two.xml", two))
	all := ids(stringSource("again.xml", again), stringSource("one.xml", one), stringSource("two.xml", two))
	if want := append(append([]string(nil), alone...), both...); !cmp.Equal(sorted(want), all) {
		t.Errorf("ids of all three files (-want +got):\n%s", cmp.Diff(sorted(want), all))
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// corpusDir is the conformance corpus: ../shared's, or the copy in
// fixtures when the project is cloned alone.
var corpusDir = corpus.Dir()

// TestIdentityOverCorpus reads every file of the conformance corpus alone:
// only two hold a test name under several projects, and only their tests
// are told apart. Everywhere else a repeated name is attempts of one test,
// as before.
func TestIdentityOverCorpus(t *testing.T) {
	want := map[string][2]int{ // tests, distinct classname::name
		"jest-junit/dorny-jest-test-results.xml":      {4143, 3983}, // spec files with the same describe and test titles
		"playwright/launchable-playwright-report.xml": {93, 31},     // chromium, firefox, webkit
	}
	var paths []string
	err := filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".xml") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil || len(paths) < 100 {
		t.Fatalf("corpus: %d files, %v", len(paths), err)
	}
	r := junit.NewReader()
	for _, p := range paths {
		rel, _ := filepath.Rel(corpusDir, p)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		plain := map[string]bool{}
		_, perr := r.Parse(p, f, func(c *junit.Case) error { plain[c.ID()] = true; return nil })
		f.Close()
		if perr != nil {
			continue // refused files are the junit package's concern
		}
		h, err := Load(context.Background(), []Source{fileSource(p)}, Options{})
		if err != nil || len(h.Skipped) > 0 {
			if len(plain) == 0 {
				continue
			}
			t.Errorf("%s: %v %v", rel, err, h.Skipped)
			continue
		}
		got := [2]int{len(h.Tests), len(plain)}
		if w, ok := want[rel]; ok && got != w || !ok && got[0] != got[1] {
			t.Errorf("%s: %d tests of %d names, want %v", rel, got[0], got[1], want[rel])
		}
	}
}

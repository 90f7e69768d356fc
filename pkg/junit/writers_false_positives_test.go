package junit

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/model"
)

func parseCases(t *testing.T, r *Reader, doc string) []Case {
	t.Helper()
	var cs []Case
	_, err := r.Parse("x.xml", strings.NewReader(doc), func(c *Case) error {
		cs = append(cs, *c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A non-Node writer's <skipped type="skipped"> with a <failure>: the
// failure is hidden, with no Node signature on the document.
func TestTypedSkipBesideAFailureStaysFailed(t *testing.T) {
	doc := `<testsuite name="com.acme.PaymentTest"><testcase classname="com.acme.PaymentTest" name="charges">` +
		`<skipped type="skipped" message="precondition"/><failure message="NPE" type="java.lang.NullPointerException">boom</failure>` +
		`</testcase></testsuite>`
	cs := parseCases(t, NewReader(), doc)
	if cs[0].Outcome != model.Failed {
		t.Errorf("outcome %v, want failed (failure hidden by a generic type=\"skipped\")", cs[0].Outcome)
	}
}

// A "commit" property outside a Bun document is not the run's commit:
// here, in a child suite, it overrode the root's commit_sha (Suite.Meta:
// the nearest wins).
func TestCommitPropertyOutsideBunNotRead(t *testing.T) {
	a := strings.Repeat("a", 40)
	doc := `<testsuites><properties><property name="commit_sha" value="` + a + `"/></properties>` +
		`<testsuite name="s"><properties><property name="commit" value="` + strings.Repeat("b", 40) + `"/></properties>` +
		`<testcase classname="c" name="t"/></testsuite></testsuites>`
	cs := parseCases(t, NewReader(), doc)
	p, _ := cs[0].Suite.Meta()
	if p.CommitSHA != a {
		t.Errorf("commit %q, want the stated commit_sha %q", p.CommitSHA, a)
	}
}

// A testcase's "commit" property (a Perforce changelist, a date) became the
// case's own commit, which history.load puts above the suite's commit_sha
// and --commit-sha.
func TestCaseCommitPropertyNotRead(t *testing.T) {
	doc := `<testsuite name="s"><testcase classname="c" name="t"><properties>` +
		`<property name="commit" value="20261205"/></properties></testcase></testsuite>`
	cs := parseCases(t, NewReader(), doc)
	if cs[0].Props.CommitSHA != "" {
		t.Errorf("case commit %q from a non-Bun property (a date / changelist number)", cs[0].Props.CommitSHA)
	}
}

// Karma's rewritten classname was kept in the reader's memory of testcase
// tags and leaked into a later document whose tags are byte-identical (and
// the reverse): a test's id depended on the files read before it.
func TestKarmaClassnameNotRemembered(t *testing.T) {
	cls := "Chrome_Headless_124_0_6367_60_(Linux_x86_64).Math"
	tc := `<testcase name="adds" time="0.001" classname="` + cls + `"/>` + "\n" +
		`<testcase name="subs" time="0.001" classname="` + cls + `"/>` + "\n"
	karma := `<testsuite name="Chrome Headless 124.0.6367.60 (Linux x86_64)">` + "\n" + tc + `</testsuite>`
	merged := `<testsuites><testsuite name="Chrome Headless 124.0.6367.60 (Linux x86_64)">` + "\n" + tc + `</testsuite></testsuites>`
	for _, order := range [][2]string{{karma, merged}, {merged, karma}} {
		fresh := parseCases(t, NewReader(), order[1])
		r := NewReader()
		parseCases(t, r, order[0])
		shared := parseCases(t, r, order[1])
		for i := range fresh {
			if fresh[i].Classname != shared[i].Classname {
				t.Errorf("case %d: fresh reader %q, reader that read the other document first %q", i, fresh[i].Classname, shared[i].Classname)
			}
		}
	}
}

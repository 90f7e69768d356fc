package junit

import (
	"bytes"
	"strings"

	"github.com/flakegate/flakegate/pkg/model"
)

// Conventions of particular JUnit writers that the counting rules alone
// read wrong. Each is recognised by what only that writer writes, so no
// other document reads differently; fixtures/junit-writers holds each
// writer's output and README.md there says where each rule comes from.

// rootConventions notes what the root element says of the writer: Deno's
// <testsuites name="deno test">, or a karma-junit-reporter <testsuite>
// named after the browser and its version.
func (r *Reader) rootConventions(kind elemKind, name string) {
	switch {
	case kind == elemSuites && name == "deno test":
		r.deno = true
	case kind == elemSuites && name == "bun test":
		r.bun = true
	case kind == elemSuite:
		r.karmaFrom, r.karmaTo = karmaPrefixes(name)
	}
	if r.karmaFrom != r.poolKarma {
		// Remembered tags hold classnames as rewritten (or not) under
		// the prefixes of the files that read them: start over, so a
		// test's id does not depend on the file read before.
		r.pool, r.memo, r.prevMemo = r.pool[:0], r.memo[:0], nil
		clear(r.seqs)
		clear(r.byPrefix)
		r.indexed, r.cursor, r.prevPosOK = 0, 0, false
		r.gen++
		r.poolKarma = r.karmaFrom
	}
}

// karmaPrefixes: karma-junit-reporter (useBrowserName, its default) starts
// every classname with the browser's name, "Chrome Headless 124.0.6367.60
// (Linux x86_64)", its spaces and dots made underscores and a dot after it
// ("Chrome_Headless_124_0_6367_60_(Linux_x86_64).Math Addition"), and names
// the root suite after it. Every browser or OS update gave every test a new
// id, so a history split in two at each update and the gate found head's
// tests new. from is that prefix; to is the same without the versions
// ("Chrome_Headless_(Linux_x86_64)."). Both are "" when the name states no
// version, so a classname of any other writer keeps its name.
func karmaPrefixes(suite string) (from, to string) {
	if !strings.ContainsAny(suite, "0123456789") {
		return "", "" // no version: most documents, at no cost
	}
	stripped, dotted := stripVersions(suite)
	if !dotted || stripped == "" {
		return "", ""
	}
	return karmaMangle(suite), karmaMangle(stripped)
}

// karmaMangle is getClassName's form of a browser name: spaces and dots
// made underscores, and a dot after it.
func karmaMangle(name string) string {
	return strings.NewReplacer(" ", "_", ".", "_").Replace(name) + "."
}

// stripVersions drops the version numbers from a browser name as karma
// gives it, "<browser> <version> (<os> <version>)": each word of digits
// and dots, and the space before it. "Chrome Headless 124.0.6367.60 (Linux
// x86_64)" is "Chrome Headless (Linux x86_64)", "Firefox 125.0 (Mac OS
// 10.15)" is "Firefox (Mac OS)". dotted reports a version with a dot among
// them, as a browser's always has.
func stripVersions(name string) (stripped string, dotted bool) {
	var b strings.Builder
	for i := 0; i < len(name); {
		j := i
		for j < len(name) && (name[j] >= '0' && name[j] <= '9' || name[j] == '.') {
			j++
		}
		wordStart := i == 0 || name[i-1] == ' ' || name[i-1] == '('
		wordEnd := j == len(name) || name[j] == ' ' || name[j] == ')'
		if j > i && name[i] != '.' && wordStart && wordEnd {
			dotted = dotted || strings.IndexByte(name[i:j], '.') >= 0
			s := b.String()
			if strings.HasSuffix(s, " ") {
				b.Reset()
				b.WriteString(s[:len(s)-1])
			}
			i = j
			continue
		}
		b.WriteByte(name[i])
		i++
	}
	return strings.TrimSpace(b.String()), dotted
}

// karmaClass is a karma classname without the browser's versions.
func (r *Reader) karmaClass(class string) string {
	if !strings.HasPrefix(class, r.karmaFrom) {
		return class
	}
	return r.intern1([]byte(r.karmaTo + class[len(r.karmaFrom):]))
}

// nodeSkipType reports the <skipped> type node --test writes for a todo
// test, "todo". Its "skipped" (t.skip()) is any writer's word, and beside
// a failure the failure stands.
func nodeSkipType(typ string) bool { return typ == "todo" }

// todoSkipped: node --test writes a todo test that throws with <skipped
// type="todo"> and a <failure>. Node counts it as todo, not failed, and
// such a failure fails no run; by error > failure > skipped it
// read as a failure, so a todo test added to a pull request looked broken,
// and one that sometimes throws, flaky. It is skipped, with the <skipped>
// element as its detail.
func (r *Reader) todoSkipped() {
	r.cur.Outcome, r.cur.Detail, r.curDirty = model.Skipped, r.todoSkip, true
}

// denoStepsFailed reports Deno's failure of a test or step whose own body
// passed but one of whose steps failed: message "1 test step failed" or
// "N test steps failed", text the same with a full stop (TestFailure::
// FailedSteps in Deno's cli/tools/test). Deno writes the steps as
// testcases of their own, "parent > child", each with its own outcome,
// and hides this failure from its summary, "caused by child errors that
// will be summarized separately".
func denoStepsFailed(o *Outcome) bool {
	m := o.Message
	if o.Type != "" || o.Text != m+"." {
		return false
	}
	n := 0
	for n < len(m) && m[n] >= '0' && m[n] <= '9' {
		n++
	}
	if n == 0 {
		return false
	}
	rest := m[n:]
	if m[:n] == "1" {
		return rest == " test step failed"
	}
	return rest == " test steps failed"
}

// denoStepsPassed reads such a test as passed: it failed only as its steps
// did, and a step that failed is a failing testcase of its own. Read as a
// failure, one flaky step made each of its parents flaky too, and one broken
// step as many broken tests as it had parents.
func (r *Reader) denoStepsPassed() {
	r.cur.Outcome, r.cur.Detail, r.curDirty = model.Passed, Outcome{}, true
}

// commitOther reads Bun's <property name="commit"> (GITHUB_SHA,
// CI_COMMIT_SHA or GIT_SHA where the tests ran) as a commit when its value
// is one: 7 to 64 hexadecimal digits. Any other value is not a commit and
// is "".
func (r *Reader) commitOther(v []byte) string {
	v = bytes.TrimSpace(v)
	if !r.bun || r.propsDst == &r.cur.Props || !model.IsCommitSHA(string(v)) {
		// Another writer's "commit" (which may mean anything), a
		// testcase's, or a value that is no full commit id (a changelist
		// number, a date): not the run's commit.
		return ""
	}
	return r.reuse(&r.lastCommit, v)
}

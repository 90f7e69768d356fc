package junit

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// refCase is what the reference reader, encoding/xml, says of a testcase.
type refCase struct {
	Class, Name, File string
	Fail, Skip        bool
	// Suite is the nearest <testsuite> or <testsuites>: its name, and the
	// commit_sha and run_id its properties or its parents' state, the
	// nearest first. Props are the testcase's own.
	Suite, Commit, RunID string
	Props                [2]string
	suite                *refSuite
	// What the writer conventions of writers.go look at: a <failure>
	// (not an <error>), the first one's type, message and text, and a
	// <skipped type="todo"> or type="skipped" (node --test).
	failure, errored, nodeSkip  bool
	failType, failMsg, failText string
}

// refSuite is a <testsuite> or <testsuites> as the reference reads it.
type refSuite struct {
	name, commit, runID string
	// commitOther is Bun's <property name="commit">, when it is a commit.
	commitOther string
	parent      *refSuite
	// Of a root: Deno's <testsuites name="deno test">, and karma's
	// classname prefix with and without the browser's versions.
	isDeno             bool
	karmaFrom, karmaTo string
}

// eol turns every line end into \n: encoding/xml normalizes the line
// ends of the document before reading it, as XML asks; the Reader keeps
// them as written.
func (c refCase) eol() refCase {
	r := strings.NewReplacer("\r\n", "\n", "\r", "\n")
	c.Class, c.Name, c.File, c.Suite = r.Replace(c.Class), r.Replace(c.Name), r.Replace(c.File), r.Replace(c.Suite)
	c.Commit, c.RunID = r.Replace(c.Commit), r.Replace(c.RunID)
	c.Props = [2]string{r.Replace(c.Props[0]), r.Replace(c.Props[1])}
	return c
}

// refParse reads the testcases of a document with encoding/xml, strictly:
// the classname, name and file attributes of each <testcase> outside
// another, whether a direct child is a <failure> or an <error>, its suite
// and the run properties of its suites and its own (a <property> directly
// in a <properties> directly in the element, its value attribute or else
// its text).
func refParse(data []byte) ([]refCase, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var out []refCase
	depth := 0
	caseDepth := -1
	// The open elements, and where a run property goes: the suite or the
	// case a <properties> belongs to, and the property being read.
	type frame struct {
		name  string
		suite *refSuite
	}
	var stack []frame
	var suite *refSuite
	propsDepth := -1
	var propsSuite *refSuite
	var propsCase *refCase
	var prop string // the property whose text is being read: "commit", "other" or "run"
	var text strings.Builder
	failDepth := -1 // the first <failure> of the open testcase, while it is read
	var failText strings.Builder
	set := func(kind, v string) {
		v = strings.TrimSpace(v)
		if kind == "other" {
			// Bun's commit: a suite's when it is 7 to 64 hex digits
			// (writers.go); never the testcase's.
			if propsSuite != nil && isHexCommit(v) && propsSuite.commitOther == "" {
				propsSuite.commitOther = v
			}
			return
		}
		switch {
		case propsSuite != nil && kind == "commit":
			propsSuite.commit = v
		case propsSuite != nil:
			propsSuite.runID = v
		case propsCase != nil && kind == "commit":
			propsCase.Props[0] = v
		case propsCase != nil:
			propsCase.Props[1] = v
		}
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			for i := range out {
				out[i].resolve()
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if prop != "" {
				text.Write(t)
			}
			if failDepth >= 0 {
				failText.Write(t)
			}
		case xml.StartElement:
			depth++
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1].name
			}
			stack = append(stack, frame{name: t.Name.Local})
			switch {
			case t.Name.Local == "testsuite" || t.Name.Local == "testsuites":
				if caseDepth < 0 {
					s := &refSuite{parent: suite}
					for _, a := range t.Attr {
						if a.Name.Local == "name" {
							s.name = a.Value
						}
					}
					if suite == nil && t.Name.Local == "testsuites" {
						s.isDeno = s.name == "deno test"
					} else if suite == nil {
						s.karmaFrom, s.karmaTo = karmaPrefixes(s.name)
					}
					suite = s
					stack[len(stack)-1].suite = s
				}
			case t.Name.Local == "properties" && propsDepth < 0:
				switch {
				case (parent == "testsuite" || parent == "testsuites") && caseDepth < 0 && suite != nil:
					propsDepth, propsSuite, propsCase = depth, suite, nil
				case parent == "testcase" && depth == caseDepth+1:
					propsDepth, propsSuite, propsCase = depth, nil, &out[len(out)-1]
				}
			case t.Name.Local == "property" && propsDepth >= 0 && depth == propsDepth+1:
				kind, value, hasValue := "", "", false
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						switch a.Value {
						case "commit_sha":
							kind = "commit"
						case "commit":
							kind = "other"
						case "run_id":
							kind = "run"
						}
					case "value":
						value, hasValue = a.Value, true
					}
				}
				switch {
				case kind == "":
				case hasValue:
					set(kind, value)
				default:
					prop = kind
					text.Reset()
				}
			}
			if t.Name.Local == "testcase" && caseDepth < 0 {
				c := refCase{}
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						c.Name = a.Value
					case "classname":
						c.Class = a.Value
					case "file":
						c.File = a.Value
					}
				}
				c.suite = suite
				out = append(out, c)
				caseDepth = depth
			} else if caseDepth >= 0 && depth == caseDepth+1 {
				c := &out[len(out)-1]
				switch t.Name.Local {
				case "failure", "error":
					c.Fail = true
					if t.Name.Local == "error" {
						c.errored = true
					} else if !c.failure {
						c.failure, failDepth = true, depth
						failText.Reset()
						for _, a := range t.Attr {
							switch a.Name.Local {
							case "type":
								c.failType = a.Value
							case "message":
								c.failMsg = a.Value
							}
						}
					}
				case "skipped":
					c.Skip = true
					for _, a := range t.Attr {
						if a.Name.Local == "type" && (a.Value == "todo" || a.Value == "skipped") {
							c.nodeSkip = true
						}
					}
				}
			}
		case xml.EndElement:
			if prop != "" && t.Name.Local == "property" {
				set(prop, text.String())
				prop = ""
			}
			if depth == propsDepth {
				propsDepth, propsSuite, propsCase = -1, nil, nil
			}
			if depth == failDepth {
				out[len(out)-1].failText = strings.TrimSpace(failText.String())
				failDepth = -1
			}
			if depth == caseDepth {
				caseDepth = -1
			}
			if f := stack[len(stack)-1]; f.suite != nil {
				suite = f.suite.parent
			}
			stack = stack[:len(stack)-1]
			depth--
		}
	}
}

// resolve fills the case's suite name and run properties: the nearest
// suite that states a value wins. It applies the writer conventions of
// writers.go, as that file states them: a failure beside node's todo or
// skipped is none, nor is Deno's "N test steps failed", karma's
// classname loses the browser's versions, and Bun's commit property is a
// suite's commit when it states no commit_sha.
func (c *refCase) resolve() {
	if c.suite == nil {
		return
	}
	c.Suite = c.suite.name
	for s := c.suite; s != nil; s = s.parent {
		if c.Commit == "" {
			c.Commit = s.commit
			if c.Commit == "" {
				c.Commit = s.commitOther
			}
		}
		if c.RunID == "" {
			c.RunID = s.runID
		}
	}
	root := c.suite
	for root.parent != nil {
		root = root.parent
	}
	if c.failure && !c.errored {
		steps := func(m string) bool {
			d := len(m) - len(strings.TrimLeft(m, "0123456789"))
			return d > 0 && (m[:d] == "1" && m[d:] == " test step failed" || m[:d] != "1" && m[d:] == " test steps failed")
		}
		switch {
		case c.nodeSkip:
			c.Fail = false
		case root.isDeno && c.failType == "" && c.failText == c.failMsg+"." && steps(c.failMsg):
			c.Fail = false
		}
	}
	if root.karmaFrom != "" && strings.HasPrefix(c.Class, root.karmaFrom) {
		c.Class = root.karmaTo + c.Class[len(root.karmaFrom):]
	}
	c.suite = nil
}

// isHexCommit reports 7 to 64 hexadecimal digits.
func isHexCommit(v string) bool {
	if len(v) < 7 || len(v) > 64 {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// FuzzAgreesWithEncodingXML: wherever encoding/xml reads a document and
// the Reader accepts it, both find the same testcases, with the same
// classnames, names and files (entities and character references decoded,
// CDATA, comments and processing instructions passed over), the same
// failed cases, the same suite names, and the same commit_sha and run_id
// for each case's suite (the nearest suite that states one) and its own. Line ends are compared as \n (refCase.eol). Seeded from
// the conformance corpus and the fixtures.
//
//	go test -run '^$' -fuzz FuzzAgreesWithEncodingXML -fuzztime 5m ./pkg/junit
func FuzzAgreesWithEncodingXML(f *testing.F) {
	addCorpus(f, 16<<10)
	f.Add([]byte(`<testsuite name="s"><testcase classname="a&#10;b" name="x&#x9;y"/></testsuite>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := refParse(data)
		if werr != nil || len(want) == 0 {
			return
		}
		var got []refCase
		var suites []*Suite
		_, err := NewReader().Parse("f.xml", bytes.NewReader(data), func(c *Case) error {
			got = append(got, refCase{Class: c.Classname, Name: c.Name, File: c.File, Fail: c.Outcome.IsFailure(),
				Suite: c.Suite.Name, Props: [2]string{c.Props.CommitSHA, c.Props.RunID}})
			suites = append(suites, c.Suite)
			return nil
		})
		if err != nil {
			t.Skip() // refused (a DOCTYPE, a cap): FuzzParse's question, not this one
		}
		// A suite's properties may follow its testcases (Robot Framework
		// writes them last): its run properties are resolved once the file
		// is read, as Suite.Meta says.
		for i, s := range suites {
			p, _ := s.Meta()
			got[i].Commit, got[i].RunID = p.CommitSHA, p.RunID
		}
		if len(got) != len(want) {
			t.Fatalf("%d cases, encoding/xml %d\n%q", len(got), len(want), data)
		}
		for i := range got {
			w := want[i].eol()
			g := got[i].eol()
			w.Skip = false // the outcome's rules are TestConformance's
			w.failure, w.errored, w.nodeSkip, w.failType, w.failMsg, w.failText = false, false, false, "", "", ""
			if g != w {
				t.Fatalf("case %d: got %+v, encoding/xml %+v\n%q", i, g, w, data)
			}
		}
	})
}

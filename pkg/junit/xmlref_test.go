package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// refCase is what the reference reader, encoding/xml, says of a testcase.
type refCase struct {
	Class, Name, File string
	Fail, Skip        bool
}

// eol turns every line end into \n: encoding/xml normalizes the line
// ends of the document before reading it, as XML asks; the Reader keeps
// them as written.
func (c refCase) eol() refCase {
	r := strings.NewReplacer("\r\n", "\n", "\r", "\n")
	c.Class, c.Name, c.File = r.Replace(c.Class), r.Replace(c.Name), r.Replace(c.File)
	return c
}

// refParse reads the testcases of a document with encoding/xml, strictly:
// the classname, name and file attributes of each <testcase> outside
// another, and whether a direct child is a <failure> or an <error>.
func refParse(data []byte) ([]refCase, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var out []refCase
	depth := 0
	caseDepth := -1
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
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
				out = append(out, c)
				caseDepth = depth
			} else if caseDepth >= 0 && depth == caseDepth+1 {
				switch t.Name.Local {
				case "failure", "error":
					out[len(out)-1].Fail = true
				case "skipped":
					out[len(out)-1].Skip = true
				}
			}
		case xml.EndElement:
			if depth == caseDepth {
				caseDepth = -1
			}
			depth--
		}
	}
}

// FuzzAgreesWithEncodingXML: wherever encoding/xml reads a document and
// the Reader accepts it, both find the same testcases, with the same
// classnames, names and files (entities and character references decoded,
// CDATA, comments and processing instructions passed over) and the same
// failed cases. Line ends are compared as \n (refCase.eol). Seeded from
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
		_, err := NewReader().Parse("f.xml", bytes.NewReader(data), func(c *Case) error {
			got = append(got, refCase{Class: c.Classname, Name: c.Name, File: c.File, Fail: c.Outcome.IsFailure()})
			return nil
		})
		if err != nil {
			t.Skip() // refused (a DOCTYPE, a cap): FuzzParse's question, not this one
		}
		if len(got) != len(want) {
			t.Fatalf("%d cases, encoding/xml %d\n%q", len(got), len(want), data)
		}
		for i := range got {
			w := want[i].eol()
			g := got[i].eol()
			if g.Class != w.Class || g.Name != w.Name || g.File != w.File || g.Fail != w.Fail {
				t.Fatalf("case %d: got %s, encoding/xml %s\n%q", i, fmt.Sprintf("%q %q %q %v", g.Class, g.Name, g.File, g.Fail), fmt.Sprintf("%q %q %q %v", w.Class, w.Name, w.File, w.Fail), data)
			}
		}
	})
}

package ledger

import (
	"bytes"
	"cmp"
	"container/heap"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/sprt"
)

// Limits on a ledger file. The head ledger comes from a pull request's head
// commit, which a fork controls, so Parse bounds its work by the file's size
// before reading any entry: YAML anchors, aliases and merge keys, which let a
// few kilobytes stand for millions of nodes, are refused outright, and the
// counts below are checked on the parsed tree before the entries are read.
const (
	// MaxFileSize caps the ledger file, in bytes. It is GitHub's limit for a
	// file the contents API returns inline ("up to 1 MB"), which is how the
	// action reads the ledger, and far above any real ledger.
	MaxFileSize = 1 << 20
	// MaxEntries caps the entries of a ledger: a quarantine of more than a
	// thousand tests is no longer an exception list.
	MaxEntries = 1000
	// MaxTraceSteps caps the llr_trace steps of one entry: one step per run
	// of the test, and the SPRT decides a freeze within a handful of runs for
	// any useful p0 and p1.
	MaxTraceSteps = 1000
	// maxProblems caps the problems a ParseError lists; one more problem
	// says how many were left out.
	maxProblems = 100
)

// Parse reads a ledger strictly. Unknown fields, wrong types, bad dates,
// unknown release triggers, missing required fields and a version other than
// 1 are all errors, and so are a second YAML document, YAML anchors, aliases
// and merge keys, a file over MaxFileSize, more than MaxEntries entries and more than MaxTraceSteps
// steps in one trace. The returned *ParseError lists the problems in file
// order (the first 100 of them), each naming the entry (index and test), the
// field, the line and what is accepted. A field that cannot be read does not
// stop the checks of the others.
func Parse(data []byte) (*Ledger, error) {
	l, p, err := read(data)
	if err != nil {
		return nil, err
	}
	p.validate(l)
	if ps := p.problems(); len(ps) > 0 {
		return nil, &ParseError{Problems: ps}
	}
	return l, nil
}

// read reads the ledger as far as it can: every field it could read is set,
// and the parser holds the problems of the others. A file it cannot read at
// all (too large, not YAML, of two documents, with anchors or aliases) is a
// *ParseError.
func read(data []byte) (*Ledger, *parser, *ParseError) {
	if len(data) > MaxFileSize {
		return nil, nil, &ParseError{Problems: []Problem{{Entry: -1,
			Message: fmt.Sprintf("file is %d bytes: at most %d bytes (1 MiB) are accepted", len(data), MaxFileSize)}}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && err != io.EOF { // EOF: no document, an empty ledger
		return nil, nil, &ParseError{Problems: []Problem{{Entry: -1, Message: "not valid YAML: " + yamlMessage(err)}}}
	}
	// A second document would be ignored: its entries would exempt
	// nothing, and whatever it holds would pass as verified. An empty one
	// (a trailing ---) holds nothing to ignore.
	after := lastLine(&doc) // where the documents read so far end
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			break
		}
		if err == nil && emptyDocument(&next) {
			after = max(after, markerAfter(data, after))
			continue
		}
		line := next.Line // the line of its ---
		if err != nil {
			line = markerAfter(data, after)
		}
		return nil, nil, &ParseError{Problems: []Problem{{Entry: -1, Line: line,
			Message: "a second YAML document is not accepted: a ledger is one document, and what follows the first would be ignored; remove the --- there and what follows it, or move its entries into the first document's entries"}}}
	}
	// Nothing below follows an alias: the tree is refused if it has one.
	if pr, bad := flat(&doc); bad {
		return nil, nil, &ParseError{Problems: []Problem{pr}}
	}
	p := &parser{}
	return p.file(&doc), p, nil
}

// emptyDocument reports whether n is a document that holds nothing: a
// --- followed by nothing, or by comments only.
func emptyDocument(n *yaml.Node) bool {
	if len(n.Content) == 0 {
		return true
	}
	c := n.Content[0]
	return len(n.Content) == 1 && c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == ""
}

// lastLine is the line of the last node of the tree, where its document
// ends at the earliest.
func lastLine(n *yaml.Node) int {
	line := n.Line
	for len(n.Content) > 0 {
		n = n.Content[len(n.Content)-1]
		line = max(line, n.Line)
	}
	return line
}

// markerAfter is the line of the first document marker (--- or ...) at
// the start of a line after line after, 1-based; 0 when there is none.
func markerAfter(data []byte, after int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if i+1 > after && (bytes.HasPrefix(l, []byte("---")) || bytes.HasPrefix(l, []byte("..."))) &&
			(len(l) == 3 || l[3] == ' ' || l[3] == '\t') {
			return i + 1
		}
	}
	return 0
}

// yamlMessage is go-yaml's error message, with a word on its line where
// that names the start of the block being read rather than the fault:
// go-yaml gives the line of a parser error's context before its problem's,
// and does not expose the latter, so an entry's key indented one space
// less than the keys above it is reported at the line of "entries:".
func yamlMessage(err error) string {
	msg := err.Error()
	if strings.Contains(msg, ": did not find expected ") {
		msg += " (the line where the block or flow being read begins: the fault is there or further down in it)"
	}
	return msg
}

// flat finds the first YAML anchor, alias or merge key in the tree, in
// document order, without following any alias. The tree has at most one node
// per token of the file, so this is linear in its size.
func flat(doc *yaml.Node) (Problem, bool) {
	const why = "is not accepted in a ledger: a ledger is a flat list of entries, so write each entry out in full (no anchors, aliases or merge keys)"
	stack := []*yaml.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case n.Kind == yaml.AliasNode:
			return Problem{Entry: -1, Line: n.Line, Message: fmt.Sprintf("YAML alias *%s %s", n.Value, why)}, true
		case n.Anchor != "":
			return Problem{Entry: -1, Line: n.Line, Message: fmt.Sprintf("YAML anchor &%s %s", n.Anchor, why)}, true
		case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!merge":
			return Problem{Entry: -1, Line: n.Line, Message: "YAML merge key << " + why}, true
		}
		for i := len(n.Content) - 1; i >= 0; i-- {
			stack = append(stack, n.Content[i])
		}
	}
	return Problem{}, false
}

// pos is where a node starts in the file, 1-based; the zero pos is nowhere.
type pos struct{ line, col int }

func (a pos) compare(b pos) int {
	return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
}

type parser struct {
	kept    firstProblems // the maxProblems problems that come first in the file
	dropped int           // the other problems, counted but not listed
	found   int           // problems found so far, to keep the order of those at one place
	entry   int           // index of the entry being read; -1 outside entries
	test    string        // its test, once read
	at      map[string]pos
	unread  map[int][]string // by entry, the fields that could not be read
}

// fail notes a field that could not be read: its value is missing, of the
// wrong kind or malformed. The checks that depend on it are skipped (see
// broken), so that its problem is said once.
func (p *parser) fail(n *yaml.Node, field, msg string, args ...any) {
	if p.unread == nil {
		p.unread = map[int][]string{}
	}
	p.unread[p.entry] = append(p.unread[p.entry], field)
	p.problem(n, field, msg, args...)
}

// problem notes a problem at a node, leaving the field readable.
func (p *parser) problem(n *yaml.Node, field, msg string, args ...any) {
	var at pos
	if n != nil {
		at = pos{n.Line, n.Column}
	}
	if !p.keeps(at) {
		p.dropped++ // not formatted: a file can have a problem per node
		return
	}
	p.add(Problem{Entry: p.entry, Test: p.test, Field: field, Line: at.line, Message: fmt.Sprintf(msg, args...)}, at)
}

// addAt adds a problem found after reading (a value check, a replay, an
// expiry) at the node of its field, or of its closest read parent.
func (p *parser) addAt(pr Problem) {
	at := p.pos(pr.Entry, pr.Field)
	pr.Line = at.line
	p.add(pr, at)
}

func (p *parser) keeps(at pos) bool {
	return len(p.kept) < maxProblems || at.compare(p.kept[0].at) < 0
}

func (p *parser) add(pr Problem, at pos) {
	x := located{pr, at, p.found}
	p.found++
	switch {
	case len(p.kept) < maxProblems:
		heap.Push(&p.kept, x)
	case x.compare(p.kept[0]) < 0:
		p.dropped++ // the last of those kept so far
		p.kept[0] = x
		heap.Fix(&p.kept, 0)
	default:
		p.dropped++
	}
}

// problems returns the problems in file order, and one more that counts
// those left out.
func (p *parser) problems() []Problem {
	kept := slices.Clone([]located(p.kept))
	slices.SortFunc(kept, located.compare)
	ps := make([]Problem, 0, len(kept)+1)
	for _, x := range kept {
		ps = append(ps, x.Problem)
	}
	if p.dropped > 0 {
		ps = append(ps, Problem{Entry: -1, Message: fmt.Sprintf("%d more problems not listed", p.dropped)})
	}
	return ps
}

// located is a problem with the place it sorts at: its node, then the order
// it was found in.
type located struct {
	Problem
	at  pos
	seq int
}

func (a located) compare(b located) int { return cmp.Or(a.at.compare(b.at), cmp.Compare(a.seq, b.seq)) }

// firstProblems is a max-heap of problems in file order: its top is the
// last problem kept, which a problem earlier in the file replaces.
type firstProblems []located

func (h firstProblems) Len() int           { return len(h) }
func (h firstProblems) Less(i, j int) bool { return h[i].compare(h[j]) > 0 }
func (h firstProblems) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *firstProblems) Push(x any)        { *h = append(*h, x.(located)) }
func (h *firstProblems) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// broken reports whether a field of an entry (-1 for the file's own) could
// not be read, or one of its parents or parts could not: the checks of its
// value are then skipped.
func (p *parser) broken(entry int, field string) bool {
	for _, f := range p.unread[entry] {
		if f == "" || f == field || within(field, f) || within(f, field) {
			return true
		}
	}
	return false
}

// within reports whether field is a part of parent: "evidence.llr_trace[2]"
// is within "evidence" and "evidence.llr_trace".
func within(field, parent string) bool {
	rest, ok := strings.CutPrefix(field, parent)
	return ok && parent != "" && rest != "" && (rest[0] == '.' || rest[0] == '[')
}

// validate runs the value checks on what was read. A check that depends on a
// field that could not be read is skipped: that field's problem is the
// reading's.
func (p *parser) validate(l *Ledger) {
	for _, pr := range validateLedger(l, p.broken) {
		p.addAt(pr)
	}
}

// record notes where a field was read, for the problems found after reading:
// the value checks, the replay and the expiry.
func (p *parser) record(field string, n *yaml.Node) {
	if p.at == nil {
		p.at = map[string]pos{}
	}
	p.at[fmt.Sprintf("%d/%s", p.entry, field)] = pos{n.Line, n.Column}
}

// pos finds where a field was read, or its closest recorded parent.
func (p *parser) pos(entry int, field string) pos {
	for f := field; ; {
		if at, ok := p.at[fmt.Sprintf("%d/%s", entry, f)]; ok {
			return at
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			return p.at[fmt.Sprintf("%d/", entry)]
		}
		f = f[:i]
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		}
		return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "nothing"
}

// fields reads a mapping, reporting unknown and duplicate keys and missing
// required ones. known lists accepted keys; required ones end in "!".
func (p *parser) fields(n *yaml.Node, where string, known ...string) map[string]*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		what := "nothing"
		if n != nil {
			what = kindName(n)
		}
		p.fail(n, where, "want a mapping, got %s", what)
		return nil
	}
	accepted := make([]string, len(known))
	required := map[string]bool{}
	for i, k := range known {
		name, req := strings.CutSuffix(k, "!")
		accepted[i] = name
		required[name] = req
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := joinField(where, k.Value)
		if _, ok := required[k.Value]; !ok || k.Kind != yaml.ScalarNode {
			p.problem(k, field, "unknown field: want one of %s", strings.Join(accepted, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.problem(k, field, "duplicate field") // the first is read
			continue
		}
		out[k.Value] = v
		p.record(field, k)
	}
	for _, name := range accepted {
		if _, ok := out[name]; required[name] && !ok {
			p.fail(n, joinField(where, name), "required field is missing")
		}
	}
	return out
}

func joinField(where, name string) string {
	if where == "" {
		return name
	}
	return where + "." + name
}

func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		p.fail(n, field, "want a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (p *parser) num(n *yaml.Node, field string) float64 {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!float" || n.Tag == "!!int") {
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	}
	p.fail(n, field, "want a finite number, got %s", kindName(n))
	return 0
}

func (p *parser) boolean(n *yaml.Node, field string) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	}
	p.fail(n, field, "want true (passed) or false (failed), got %s", kindName(n))
	return false
}

func (p *parser) list(n *yaml.Node, field string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, field, "want a list, got %s", kindName(n))
		return nil
	}
	return n.Content
}

func (p *parser) file(doc *yaml.Node) *Ledger {
	p.entry = -1
	l := &Ledger{}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		p.fail(nil, "", "empty file: want \"version: 1\" and \"entries:\"")
		return l
	}
	p.record("", doc.Content[0])
	top := p.fields(doc.Content[0], "", "version!", "entries!")
	if top == nil {
		return l
	}
	if v, ok := top["version"]; ok {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
			p.fail(v, "version", "want the integer %d, got %s", Version, kindName(v))
		} else if n, err := strconv.Atoi(v.Value); err != nil || n != Version {
			p.fail(v, "version", "unsupported version %s: want %d", v.Value, Version)
		} else {
			l.Version = n
		}
	}
	entries, ok := top["entries"]
	if !ok {
		return l
	}
	if entries.Kind == yaml.ScalarNode && entries.Tag == "!!null" {
		return l // "entries:" with nothing under it: an empty ledger
	}
	if entries.Kind == yaml.SequenceNode && len(entries.Content) > MaxEntries {
		p.fail(entries, "entries", "%d entries: at most %d (MaxEntries) are accepted", len(entries.Content), MaxEntries)
		return l
	}
	for i, en := range p.list(entries, "entries") {
		p.entry, p.test = i, ""
		p.record("", en)
		l.Entries = append(l.Entries, p.entryOf(en))
	}
	p.entry, p.test = -1, ""
	return l
}

func (p *parser) entryOf(n *yaml.Node) Entry {
	var e Entry
	if n.Kind == yaml.MappingNode { // name the test in every problem, even those found before it
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := n.Content[i], n.Content[i+1]; k.Value == "test" && v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				p.test = v.Value
			}
		}
	}
	f := p.fields(n, "", "test!", "signature!", "owner!", "issue!", "expires", "replacement!", "evidence!", "release_triggers!")
	if f == nil {
		return e
	}
	if v, ok := f["test"]; ok {
		e.Test = p.str(v, "test")
		p.test = e.Test
	}
	strField := func(name string, dst *string) {
		if v, ok := f[name]; ok {
			*dst = p.str(v, name)
		}
	}
	strField("signature", &e.Signature)
	strField("owner", &e.Owner)
	strField("issue", &e.Issue)
	strField("replacement", &e.Replacement)
	if v, ok := f["expires"]; ok {
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!timestamp" && v.Tag != "!!str") {
			p.fail(v, "expires", "want a date YYYY-MM-DD, got %s", kindName(v))
		} else if d, err := ParseDate(v.Value); err != nil {
			p.fail(v, "expires", "%v", err)
		} else {
			e.Expires = d
		}
	}
	if v, ok := f["release_triggers"]; ok {
		for j, t := range p.list(v, "release_triggers") {
			field := fmt.Sprintf("release_triggers[%d]", j)
			p.record(field, t)
			e.ReleaseTriggers = append(e.ReleaseTriggers, Trigger(p.str(t, field)))
		}
	}
	if v, ok := f["evidence"]; ok {
		e.Evidence = p.evidence(v)
	}
	return e
}

func (p *parser) evidence(n *yaml.Node) Evidence {
	ev := Evidence{Alpha: sprt.DefaultAlpha, Beta: sprt.DefaultBeta}
	f := p.fields(n, "evidence", "p_flake_baseline!", "p_regression!", "alpha", "beta", "llr_trace!", "decision!")
	if f == nil {
		return ev
	}
	numField := func(name string, dst *float64) {
		if v, ok := f[name]; ok {
			*dst = p.num(v, "evidence."+name)
		}
	}
	numField("p_flake_baseline", &ev.PFlakeBaseline)
	numField("p_regression", &ev.PRegression)
	numField("alpha", &ev.Alpha)
	numField("beta", &ev.Beta)
	if v, ok := f["decision"]; ok {
		ev.Decision = sprt.Decision(p.str(v, "evidence.decision"))
	}
	if v, ok := f["llr_trace"]; ok {
		if v.Kind == yaml.SequenceNode && len(v.Content) > MaxTraceSteps {
			p.fail(v, "evidence.llr_trace", "%d steps: at most %d (MaxTraceSteps) are accepted", len(v.Content), MaxTraceSteps)
			return ev
		}
		for j, s := range p.list(v, "evidence.llr_trace") {
			field := fmt.Sprintf("evidence.llr_trace[%d]", j)
			p.record(field, s)
			if s.Kind != yaml.SequenceNode {
				p.fail(s, field, "want [passed, step, cumulative], got %s", kindName(s))
				continue
			}
			triple := s.Content
			if len(triple) != 3 {
				p.fail(s, field, "want [passed, step, cumulative], got %d elements", len(triple))
				continue
			}
			for k, x := range triple {
				if x.Line != s.Line { // else the step's line is the element's
					p.record(fmt.Sprintf("%s[%d]", field, k), x)
				}
			}
			ev.Trace = append(ev.Trace, sprt.Step{
				Passed:     p.boolean(triple[0], field+"[0]"),
				Step:       p.num(triple[1], field+"[1]"),
				Cumulative: p.num(triple[2], field+"[2]"),
			})
		}
	}
	return ev
}

// Marshal writes the ledger in the canonical layout: two-space indent,
// quoted strings, traces as flow lists of [passed, step, cumulative]. Parse
// reads back what Marshal writes.
func (l *Ledger) Marshal() ([]byte, error) {
	entries := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if len(l.Entries) == 0 {
		entries.Style = yaml.FlowStyle
	}
	for _, e := range l.Entries {
		m := mapping()
		addPair(m, "test", quoted(e.Test))
		addPair(m, "signature", quoted(e.Signature))
		addPair(m, "owner", quoted(e.Owner))
		addPair(m, "issue", quoted(e.Issue))
		if !e.Expires.IsZero() {
			addPair(m, "expires", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: e.Expires.String()})
		}
		addPair(m, "replacement", quoted(e.Replacement))
		ev := mapping()
		addPair(ev, "p_flake_baseline", number(e.Evidence.PFlakeBaseline))
		addPair(ev, "p_regression", number(e.Evidence.PRegression))
		addPair(ev, "alpha", number(e.Evidence.Alpha))
		addPair(ev, "beta", number(e.Evidence.Beta))
		trace := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, s := range e.Evidence.Trace {
			trace.Content = append(trace.Content, &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle,
				Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(s.Passed)},
					number(s.Step), number(s.Cumulative),
				}})
		}
		addPair(ev, "llr_trace", trace)
		addPair(ev, "decision", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(e.Evidence.Decision)})
		addPair(m, "evidence", ev)
		triggers := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, t := range e.ReleaseTriggers {
			triggers.Content = append(triggers.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(t)})
		}
		addPair(m, "release_triggers", triggers)
		entries.Content = append(entries.Content, m)
	}
	root := mapping()
	addPair(root, "version", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(l.Version)})
	addPair(root, "entries", entries)

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, fmt.Errorf("ledger: encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("ledger: encode: %w", err)
	}
	return buf.Bytes(), nil
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func addPair(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func number(f float64) *yaml.Node {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}
}

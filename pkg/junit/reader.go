package junit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/flakegate/flakegate/pkg/model"
)

// Reader parses JUnit files one after another. It keeps its buffers and an
// intern table of names between files, so one Reader per goroutine parses a
// history with few allocations. A Reader is not safe for concurrent use.
type Reader struct {
	buf                 []byte
	pos                 int // next unread byte in buf
	end                 int // end of valid data in buf
	eof                 bool
	rerr                error
	lines               int // newlines in bytes already dropped from buf
	src                 io.Reader
	file                string
	intern              map[string]string
	lastClass, lastFile string
	// The name and hostname of the last suite: merged reports repeat them
	// from one <testsuite> to the next.
	lastSuite, lastHost string
	pool                []tagMemo // testcase tags read, referred to by index
	gen                 uint32    // bumped when pool starts over (Case.Memo)
	memo, prevMemo      []int32   // pool indexes of the testcase tags of this file and the one it follows
	cursor              int       // next expected position in prevMemo
	// seqs holds the memo of earlier files by the prefix of their first
	// testcase tag. A file follows the file read last, unless its first
	// tag starts another file read before: with a file per class, the
	// class's file of the previous run.
	seqs map[string][]int32
	// byPrefix finds a remembered testcase tag by its prefix (resync): it
	// holds the first indexed tags of pool, indexed when first needed.
	// keyBuf holds a key memoKey built. prevPos is each remembered tag's
	// place in prevMemo (-1 if none), built when first needed; prevPosOK
	// says it is built for this prevMemo (reset and follow clear it).
	byPrefix  map[string]int32
	indexed   int
	keyBuf    []byte
	prevPos   []int32
	prevPosOK bool

	// element stack: names live in nameArena, one entry per open element
	stack     []frame
	nameArena []byte

	sawRoot  bool
	rootDone bool

	suite    *Suite
	cur      Case
	curDirty bool // cur's Detail or Props may be set
	inCase   bool
	caseLvl  int // depth of the open <testcase>
	// The open testcase's content: where it starts, as an offset in the
	// input (-1 for none), and the deepest element in it, below the
	// testcase (rememberBody).
	bodyAt   int64
	bodyDeep int
	base     int64 // the offset in the input of buf[0]

	// outcome element being read (direct child of the testcase)
	outLvl    int // 0 when none
	outKind   outKind
	out       Outcome
	text      []byte // captured text of the outcome element or property
	textCut   int    // bytes of that text dropped past its cap
	capturing bool
	skipLvl   int // >0 while inside system-out/system-err under an outcome

	// <property> with its value as element text
	propLvl  int
	propName propKind
	propDst  *Props

	// Per-suite work repeats from suite to suite: a file per class, or a
	// <testsuite> per class in one file, restate the same properties and
	// timestamp. The last values read are kept to be reused.
	lastCommit, lastRunID string
	lastStamp             []byte    // the last suite timestamp read, as written
	lastTime              time.Time // what it said
	stampLayout           int       // index in timeLayouts of the layout that read it
	suiteSlab             []Suite   // suites are carved from here, a chunk at a time

	notRun      notRun // what the open testcase's attributes say of a test that did not run
	primarySeen bool   // the open testcase has had a failure, error or skipped child

	// Writer conventions of the document being read (writers.go).
	deno bool // the root is Deno's <testsuites name="deno test">
	bun  bool // the root is Bun's <testsuites name="bun test">
	// karmaFrom and karmaTo rewrite karma-junit-reporter's classnames,
	// which start with the browser's name and version, to start with the
	// name alone (karmaClass); both "" for other documents.
	karmaFrom, karmaTo string
	poolKarma          string // karmaFrom of the files whose tags pool holds
	// todoSkip holds the open testcase's <skipped type="todo"> or
	// <skipped type="skipped">, as node --test writes a todo or skipped
	// test, when it has one (todoSkipped).
	todoSkip     Outcome
	todoSkipSeen bool

	propsLvl int // depth of the open <properties>, 0 when none
	propsDst *Props
	// propTags holds self-closing <property> tags read before, whole, and
	// what each set: a run's files, and a file's suites, restate the same
	// properties (Surefire writes every system property in every file).
	propTags map[string]propMemo
	propRead propMemo // what the <property> tag just opened did, if ok
	// propPrev is what the property tags of the last <properties> that
	// had some did, in order, and propCur those of the one being read:
	// properties restated from suite to suite come in the same order, so
	// a tag is first compared with the one at its place in propPrev, and
	// looked up in propTags only when it differs.
	propPrev, propCur []propMemo
	propAt            int // the place in propPrev of the next property tag
	// suitePrev is what the <testsuite> tags below the root of the last
	// file that had some said, in order, and suiteCur those of this file
	// (repeatSuite); suiteAt is the place in suitePrev of the next one.
	suitePrev, suiteCur []suiteMemo
	suiteAt             int

	scans        int       // start-tag scans, for tests
	repeats      int       // tags done again from their bytes (repeatCase, repeatProperty), for tests
	suiteRepeats int       // suite tags done again from their bytes (repeatSuite), for tests
	spans        []attr    // attributes of the tag just scanned, unless a testcase
	ca           caseAttrs // the attributes of a testcase tag
	scratch      []byte    // decoded attribute values of that tag
	cutBuf       []byte    // a name being cut
	totals       Totals

	// Repeat, when set, is offered each case whose self-closing testcase
	// tag repeats a remembered tag (Case.Memo) whose attributes do not say
	// the test did not run (notRun): a plain pass, with no outcome
	// element, reruns or properties. index and generation are what
	// Case.Memo would return, suite is the case's Suite and file its file
	// attribute. When Repeat returns true it has
	// taken the case, which counts as passed, and fn is not called for
	// it; when false, fn is. It saves a history's builder the work of
	// filling a Case for the bulk of its results.
	Repeat func(index int32, generation uint32, suite *Suite, file string) bool
}

type frame struct {
	nameOff, nameLen int
	kind             elemKind
}

type elemKind uint8

const (
	elemOther elemKind = iota
	elemSuites
	elemSuite
	elemCase
	elemFailure
	elemError
	elemSkipped
	elemFlakyFailure
	elemFlakyError
	elemRerunFailure
	elemRerunError
	elemProperties
	elemProperty
	elemSystemOut
	elemSystemErr
	elemStackTrace
)

type outKind uint8

const (
	outNone outKind = iota
	outPrimary
	outRerun
)

func elemKindOf(name []byte) elemKind {
	switch string(name) {
	case "testcase":
		return elemCase
	case "testsuite":
		return elemSuite
	case "testsuites":
		return elemSuites
	case "failure":
		return elemFailure
	case "error":
		return elemError
	case "skipped":
		return elemSkipped
	case "flakyFailure":
		return elemFlakyFailure
	case "flakyError":
		return elemFlakyError
	case "rerunFailure":
		return elemRerunFailure
	case "rerunError":
		return elemRerunError
	case "properties":
		return elemProperties
	case "property":
		return elemProperty
	case "system-out":
		return elemSystemOut
	case "system-err":
		return elemSystemErr
	case "stackTrace":
		return elemStackTrace
	}
	return elemOther
}

// NewReader returns a Reader ready for its first file.
func NewReader() *Reader {
	return &Reader{
		buf:      make([]byte, readChunk*2),
		intern:   make(map[string]string),
		propTags: make(map[string]propMemo),
		seqs:     make(map[string][]int32),
		byPrefix: make(map[string]int32),
	}
}

// Reserve makes room for about n testcases in the tables a Reader keeps
// from file to file, the strings it interns and the testcase tags it
// remembers, when it has read none yet; a Reader that has keeps its tables.
func (r *Reader) Reserve(n int) {
	if len(r.pool) > 0 || len(r.intern) > 0 || n <= 0 {
		return
	}
	r.intern = make(map[string]string, n)
	r.pool, r.memo = slices.Grow(r.pool, n), slices.Grow(r.memo, n)
}

// Parse reads one JUnit document from src and calls fn for every
// <testcase> as it closes. The *Case is reused: fn must copy what it keeps
// (its Suite pointer stays valid). name labels errors. Parse returns the
// totals of testcases by final outcome. It refuses DOCTYPE declarations,
// unknown entities, malformed or truncated XML, nesting beyond MaxDepth and
// a root other than <testsuites> or <testsuite>, with a *ParseError naming
// the file and line.
func (r *Reader) Parse(name string, src io.Reader, fn func(*Case) error) (Totals, error) {
	r.reset(name, src)
	err := r.run(fn)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			err = &ParseError{File: name, Line: r.lineAt(r.pos), Msg: err.Error()}
		}
		return r.totals, err
	}
	return r.totals, nil
}

func (r *Reader) reset(name string, src io.Reader) {
	r.pos, r.end, r.eof, r.rerr, r.lines, r.base = 0, 0, false, nil, 0, 0
	r.src, r.file = src, name
	r.stack = r.stack[:0]
	r.nameArena = r.nameArena[:0]
	r.sawRoot, r.rootDone = false, false
	r.suite = nil
	r.deno, r.bun, r.karmaFrom, r.karmaTo = false, false, "", ""
	r.cur, r.curDirty = Case{}, false
	r.inCase, r.caseLvl = false, 0
	r.outLvl, r.outKind, r.capturing, r.skipLvl = 0, outNone, false, 0
	r.propLvl, r.propsLvl, r.propDst, r.propsDst = 0, 0, nil, nil
	r.text, r.textCut = r.text[:0], 0
	r.totals = Totals{}
	if len(r.buf) > maxIdleBuf {
		r.buf = make([]byte, readChunk*2)
	}
	if cap(r.scratch) > maxIdleBuf {
		r.scratch = nil
	}
	if len(r.memo) > 0 {
		var free []int32 // the memo this one replaces, no longer used
		if p := r.pool[r.memo[0]].prefix; p != "" && len(r.seqs) < maxSeqs {
			free = r.seqs[p]
			r.seqs[p] = r.memo
		}
		r.prevMemo, r.memo = r.memo, free[:0]
	}
	if len(r.pool) >= maxPool {
		// A history whose tags keep changing: start over.
		r.pool, r.memo, r.prevMemo = r.pool[:0], r.memo[:0], nil
		clear(r.seqs)
		clear(r.byPrefix)
		r.indexed = 0
		r.gen++ // the indexes of remembered tags mean other tags now
	}
	r.cursor, r.prevPosOK = 0, false
	if len(r.suiteCur) > 0 {
		r.suitePrev, r.suiteCur = r.suiteCur, r.suitePrev[:0]
	}
	r.suiteAt = 0
	if len(r.intern) > 1<<16 {
		r.intern = make(map[string]string)
	}
}

func (r *Reader) errf(at int, format string, args ...any) error {
	return &ParseError{File: r.file, Line: r.lineAt(at), Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) lineAt(at int) int {
	if at > r.end {
		at = r.end
	}
	return r.lines + bytes.Count(r.buf[:at], []byte{'\n'}) + 1
}

// fill reads more input, keeping buf[keep:end]. It moves the kept bytes to
// the front, so offsets into buf shift by keep. It reports whether any new
// bytes arrived.
func (r *Reader) fill(keep int) bool {
	if r.eof {
		return false
	}
	if keep > 0 {
		r.lines += bytes.Count(r.buf[:keep], []byte{'\n'})
		n := copy(r.buf, r.buf[keep:r.end])
		r.pos -= keep
		r.end = n
		r.base += int64(keep)
	}
	if len(r.buf)-r.end < readChunk {
		nb := make([]byte, max(2*len(r.buf), r.end+readChunk))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// need makes at least n bytes available from pos, reading more if the input
// has them. It reports whether they are there.
func (r *Reader) need(n int) bool {
	for r.end-r.pos < n {
		if !r.fill(r.pos) {
			return false
		}
	}
	return true
}

func (r *Reader) run(fn func(*Case) error) error {
	if err := r.prolog(); err != nil {
		return err
	}
	for {
		i := bytes.IndexByte(r.buf[r.pos:r.end], '<')
		if i < 0 {
			// Hold back an entity reference cut by the window's end.
			cut := r.end
			if !r.eof {
				tail := max(r.pos, r.end-maxEntityLen)
				if k := bytes.LastIndexByte(r.buf[tail:r.end], '&'); k >= 0 && bytes.IndexByte(r.buf[tail+k:r.end], ';') < 0 {
					cut = tail + k
				}
			}
			if err := r.chardata(r.buf[r.pos:cut], r.pos); err != nil {
				return err
			}
			r.pos = cut
			if !r.fill(r.pos) {
				if r.pos < r.end {
					if err := r.chardata(r.buf[r.pos:r.end], r.pos); err != nil {
						return err
					}
					r.pos = r.end
				}
				break
			}
			continue
		}
		if i > 0 {
			if err := r.chardata(r.buf[r.pos:r.pos+i], r.pos); err != nil {
				return err
			}
			r.pos += i
		}
		if !r.need(2) {
			return r.errf(r.pos, "unexpected end of file after '<'")
		}
		var err error
		switch r.buf[r.pos+1] {
		case '/':
			err = r.endTag(fn)
		case '?':
			err = r.skipUntil("?>", false)
		case '!':
			err = r.bang()
		default:
			var done bool
			switch {
			case r.buf[r.pos+1] == 'p':
				done = r.repeatProperty()
			case r.end-r.pos > 10 && string(r.buf[r.pos+1:r.pos+10]) == "testsuite":
				done = r.repeatSuite()
			default:
				done, err = r.repeatCase(fn)
			}
			if !done && err == nil {
				err = r.startTag(fn)
			}
		}
		if err != nil {
			return err
		}
		if !r.capturing {
			// The white space that indents the next tag: nothing to keep
			// or check.
			j := r.pos
			for j < r.end && isSpace(r.buf[j]) {
				j++
			}
			if j < r.end && r.buf[j] == '<' {
				r.pos = j
			}
		}
	}
	if r.rerr != nil {
		return r.errf(r.end, "read: %v", r.rerr)
	}
	if !r.sawRoot {
		if r.end == 0 && r.lines == 0 {
			return r.errf(0, "empty file: expected a <testsuites> or <testsuite> root element")
		}
		return r.errf(r.end, "no root element: expected <testsuites> or <testsuite>")
	}
	if len(r.stack) > 0 {
		top := r.stack[len(r.stack)-1]
		return r.errf(r.end, "unexpected end of file: <%s> is not closed (truncated file?)", r.arenaName(top))
	}
	return nil
}

func (r *Reader) arenaName(f frame) string {
	return string(r.nameArena[f.nameOff : f.nameOff+f.nameLen])
}

// chardata handles text between markup. Outside the root only whitespace is
// allowed; inside, entities must be well-formed, and captured text is kept.
func (r *Reader) chardata(b []byte, at int) error {
	if len(r.stack) == 0 {
		for j, c := range b {
			if !isSpace(c) {
				if r.rootDone {
					return r.errf(at+j, "text after the root element")
				}
				return r.errf(at+j, "text before the root element: this is not an XML document")
			}
		}
		return nil
	}
	if !r.capturing || r.skipLvl > 0 {
		// Check entity references only; the text itself is not kept.
		for {
			k := bytes.IndexByte(b, '&')
			if k < 0 {
				return nil
			}
			n, _, err := entity(b[k:])
			if err != nil {
				return r.errf(at+k, "%v", err)
			}
			b = b[k+n:]
			at += k + n
		}
	}
	return r.capture(b, at)
}

func (r *Reader) capture(b []byte, at int) error {
	for len(b) > 0 {
		k := bytes.IndexByte(b, '&')
		if k < 0 {
			r.keep(b)
			return nil
		}
		r.keep(b[:k])
		n, dec, err := entity(b[k:])
		if err != nil {
			return r.errf(at+k, "%v", err)
		}
		r.keep(dec)
		b = b[k+n:]
		at += k + n
	}
	return nil
}

func (r *Reader) keep(b []byte) {
	limit := MaxMessageBytes
	if r.propLvl > 0 {
		limit = maxPropertyBytes
	}
	room := limit - len(r.text)
	if len(b) > room {
		r.textCut += len(b) - max(room, 0)
		if room <= 0 {
			return
		}
		b = b[:room]
	}
	r.text = append(r.text, b...)
}

// entity decodes the reference at the start of b ("&...;"). It returns the
// bytes consumed and the decoded bytes.
func entity(b []byte) (int, []byte, error) {
	semi := bytes.IndexByte(b, ';')
	if semi < 0 || semi >= maxEntityLen {
		return 0, nil, fmt.Errorf("bare '&' or unterminated entity reference %q", clip(b, 12))
	}
	name := b[1:semi]
	switch string(name) {
	case "lt":
		return semi + 1, []byte("<"), nil
	case "gt":
		return semi + 1, []byte(">"), nil
	case "amp":
		return semi + 1, []byte("&"), nil
	case "quot":
		return semi + 1, []byte(`"`), nil
	case "apos":
		return semi + 1, []byte("'"), nil
	}
	if len(name) > 1 && name[0] == '#' {
		var v uint64
		var err error
		if name[1] == 'x' || name[1] == 'X' {
			v, err = strconv.ParseUint(string(name[2:]), 16, 32)
		} else {
			v, err = strconv.ParseUint(string(name[1:]), 10, 32)
		}
		if err != nil || v == 0 || v > utf8.MaxRune {
			return 0, nil, fmt.Errorf("invalid character reference &%s;", name)
		}
		return semi + 1, utf8.AppendRune(nil, rune(v)), nil
	}
	return 0, nil, fmt.Errorf("undeclared entity &%s; (only &lt; &gt; &amp; &quot; &apos; and character references are accepted)", clip(name, 40))
}

func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipUntil consumes through the terminator, feeding the skipped bytes to
// the capture when asked (CDATA).
func (r *Reader) skipUntil(term string, keep bool) error {
	startLine := 0 // counted only when the section spans reads
	start := r.pos
	r.pos += 2
	t := []byte(term)
	for {
		i := bytes.Index(r.buf[r.pos:r.end], t)
		if i >= 0 {
			if keep {
				r.keep(r.buf[r.pos : r.pos+i])
			}
			r.pos += i + len(t)
			return nil
		}
		if startLine == 0 {
			startLine = r.lineAt(start)
		}
		// Keep the last len(t)-1 bytes: the terminator may straddle reads.
		safe := r.end - (len(t) - 1)
		if safe > r.pos {
			if keep {
				r.keep(r.buf[r.pos:safe])
			}
			r.pos = safe
		}
		if !r.fill(r.pos) {
			return &ParseError{File: r.file, Line: startLine, Msg: fmt.Sprintf("unexpected end of file: no closing %q", term)}
		}
	}
}

func (r *Reader) bang() error {
	if !r.need(9) {
		r.need(4)
	}
	rest := r.buf[r.pos:r.end]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		r.pos += 2 // skipUntil skips two more
		return r.skipUntil("-->", false)
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		if len(r.stack) == 0 {
			return r.errf(r.pos, "CDATA section outside the root element")
		}
		r.pos += 7
		return r.skipUntil("]]>", r.capturing && r.skipLvl == 0)
	case bytes.HasPrefix(rest, []byte("<!DOCTYPE")):
		// The declaration is not read, but its name is: Cobertura and
		// JaCoCo reports open with one, and they are not JUnit.
		r.need(9 + 1 + maxDoctypeName)
		name := bytes.TrimLeft(r.buf[r.pos+9:r.end], " \t\r\n")
		n := 0
		for n < len(name) && n < maxDoctypeName && nameByte[name[n]] && name[n] != '[' {
			n++
		}
		if what, _ := otherFormat(name[:n]); len(r.stack) == 0 && what != "" {
			return r.notJUnit(r.pos, "DOCTYPE", name[:n])
		}
		return r.errf(r.pos, "DOCTYPE declarations are refused: JUnit needs none, and entity declarations enable entity-expansion and external-entity attacks")
	}
	return r.errf(r.pos, "malformed markup %q", clip(rest, 12))
}

// maxDoctypeName bounds the DOCTYPE name read to tell a known format.
const maxDoctypeName = 64

// notJUnit refuses a document whose root element (or the DOCTYPE naming it,
// what) is name, saying what it is when it is a known format (noResults,
// otherResults).
func (r *Reader) notJUnit(at int, what string, name []byte) error {
	err := r.errf(at, "%s <%s> is not JUnit: expected <testsuites> or <testsuite>", what, clip(name, 40)).(*ParseError)
	switch other, results := otherFormat(name); {
	case results:
		err.Other, err.Results = other, true
		err.Msg = fmt.Sprintf("%s <%s> is not JUnit but %s: its results are not read", what, name, other)
	case other != "":
		err.Other = other
		err.Msg = fmt.Sprintf("%s <%s> is not JUnit but %s: no test results here", what, name, other)
	}
	return err
}

// tagEnd finds the '>' closing the end tag at pos, reading more input as
// needed, and returns its offset from pos.
func (r *Reader) tagEnd() (int, error) {
	from := 0 // bytes already searched, kept across reads
	for {
		if i := bytes.IndexByte(r.buf[r.pos+from:r.end], '>'); i >= 0 {
			return from + i, nil
		}
		from = r.end - r.pos
		if r.end-r.pos > maxTagBytes {
			return 0, r.errf(r.pos, "tag longer than %d bytes", maxTagBytes)
		}
		if !r.fill(r.pos) {
			return 0, r.errf(r.pos, "unexpected end of file inside a tag (truncated file?)")
		}
	}
}

// nameByte marks the bytes that may appear in a name. It is looser than
// XML's rule: any byte above space except markup characters.
var nameByte = func() (t [256]bool) {
	for c := 0x21; c < 256; c++ {
		t[c] = true
	}
	for _, c := range []byte(`/>='"<`) {
		t[c] = false
	}
	return t
}()

func (r *Reader) endTag(fn func(*Case) error) error {
	gt, err := r.tagEnd()
	if err != nil {
		return err
	}
	name := r.buf[r.pos+2 : r.pos+gt]
	for len(name) > 0 && isSpace(name[len(name)-1]) {
		name = name[:len(name)-1]
	}
	if len(r.stack) == 0 {
		return r.errf(r.pos, "closing tag </%s> with no open element", clip(name, 40))
	}
	top := r.stack[len(r.stack)-1]
	if !bytes.Equal(name, r.nameArena[top.nameOff:top.nameOff+top.nameLen]) {
		return r.errf(r.pos, "closing tag </%s> does not match <%s>", clip(name, 40), r.arenaName(top))
	}
	r.pos += gt + 1
	return r.close(top, fn)
}

func (r *Reader) startTag(fn func(*Case) error) error {
	gt, n, err := r.scanTag()
	if err != nil {
		return err
	}
	at := r.pos
	tag := r.buf[r.pos+1 : r.pos+gt]
	selfClose := tag[len(tag)-1] == '/'
	name := tag[:n]
	if len(r.stack) == 0 {
		if r.rootDone {
			return r.errf(at, "second root element <%s>", clip(name, 40))
		}
		if string(name) != "testsuites" && string(name) != "testsuite" {
			return r.notJUnit(at, "root element", name)
		}
		r.sawRoot = true
	}
	if len(r.stack) >= MaxDepth {
		return r.errf(at, "elements nested deeper than %d levels", MaxDepth)
	}
	kind := elemKindOf(name)
	r.stack = append(r.stack, frame{nameOff: len(r.nameArena), nameLen: n, kind: kind})
	r.nameArena = append(r.nameArena, name...)
	if r.inCase && len(r.stack)-r.caseLvl > r.bodyDeep {
		r.bodyDeep = len(r.stack) - r.caseLvl
	}
	r.propRead.ok = false
	if err := r.open(kind, at); err != nil {
		return err
	}
	if (kind == elemSuite || kind == elemSuites) && r.suiteBelowRoot() {
		r.rememberSuite(at, gt, selfClose)
	}
	if selfClose && r.propRead.ok && gt < maxPropTag && bytes.IndexByte(tag, '>') < 0 {
		if len(r.propTags) >= maxPropTags {
			clear(r.propTags)
		}
		r.propRead.tag = string(r.buf[at : at+gt+1])
		r.propTags[r.propRead.tag] = r.propRead
		r.propAt++
		if len(r.propCur) < maxPropTags {
			r.propCur = append(r.propCur, r.propRead)
		}
	}
	r.pos += gt + 1
	if selfClose {
		top := r.stack[len(r.stack)-1]
		return r.close(top, fn)
	}
	if kind == elemCase && r.inCase && r.caseLvl == len(r.stack) {
		r.bodyAt = r.base + int64(r.pos)
	}
	return nil
}

// repeatCase reads the tag at pos when it is a self-closing testcase tag
// that repeats a tag of the file this one follows, byte for byte, up to a
// time attribute that ends it: the tag of nearly every result in a
// history. It does for it what startTag, open and close do, without
// scanning the attributes or pushing an element. It reports false, having
// changed nothing, for any other tag, or one cut by the window's end.
func (r *Reader) repeatCase(fn func(*Case) error) (bool, error) {
	if r.inCase || r.capturing || r.outLvl|r.propsLvl|r.propLvl|r.skipLvl != 0 ||
		len(r.stack) == 0 || len(r.stack) >= MaxDepth {
		return false, nil
	}
	for j := r.cursor; j < r.cursor+2 && j < len(r.prevMemo); j++ {
		if ok, err := r.repeatAt(r.pos, j, fn); ok {
			if err != nil {
				return true, err
			}
			return true, r.repeatRest(fn)
		}
	}
	if j, ok := r.resync(r.pos); ok {
		if ok, err := r.repeatAt(r.pos, j, fn); ok {
			if err != nil {
				return true, err
			}
			return true, r.repeatRest(fn)
		}
	}
	return false, nil
}

// repeatRest goes on reading, after a repeated tag, the tags that repeat
// the next ones of the previous file, one after the other, while only
// white space lies between them: the bulk of a run's file.
func (r *Reader) repeatRest(fn func(*Case) error) error {
	for r.cursor < len(r.prevMemo) {
		at := r.pos
		for at < r.end && isSpace(r.buf[at]) {
			at++
		}
		if ok, err := r.repeatAt(at, r.cursor, fn); !ok || err != nil {
			return err
		}
	}
	return nil
}

// repeatAt reads the tag at buf[at] as prevMemo[j] when its bytes repeat
// that tag up to a time attribute in the common form, and hands the case
// to fn. It reports false, having read nothing, when they do not.
func (r *Reader) repeatAt(at, j int, fn func(*Case) error) (bool, error) {
	k := r.prevMemo[j]
	m := &r.pool[k]
	b := r.buf[at:r.end]
	if m.prefix == "" {
		return false, nil
	}
	n, ok := len(m.prefix), hasPrefix(b, m.prefix)
	if m.prefixHole != 0 {
		n, ok = matchAround(b, m.prefix, int(m.prefixHole))
	}
	if !ok {
		return false, nil
	}
	body := m.body
	if body != "" && len(r.stack)+1+int(m.bodyDeep) > MaxDepth {
		body = "" // its elements would be nested too deep here
	}
	gt, val, ok := timeThenEnd(b[n:], m.suffix, m.suffixHole, body)
	if !ok {
		return false, nil
	}
	r.scans++
	r.repeats++
	if r.Repeat != nil && m.notRun == 0 && r.Repeat(k, r.gen, r.suite, m.file) {
		r.cursor = j + 1
		r.memo = append(r.memo, k)
		r.totals.Testcases++
		r.totals.Passed++
		r.pos = at + n + gt + 1
		return true, nil
	}
	r.resetCase()
	r.caseFromMemo(m, k, j+1, val)
	r.pos = at + n + gt + 1
	return true, r.finishCase(fn)
}

// caseFromMemo fills the case being read from pool[k], a tag read before,
// and its own time attribute (nil when it has none); next is the cursor's place after it.
func (r *Reader) caseFromMemo(m *tagMemo, k int32, next int, timeAttr []byte) {
	r.cursor = next
	r.cur.memo, r.cur.memoGen = k, r.gen
	r.cur.setNames(m.name, m.class, m.file)
	r.cur.line = m.line
	if len(timeAttr) <= maxNumberBytes {
		r.cur.setTime(timeAttr)
	}
	r.notRun, r.primarySeen = m.notRun, false
	r.memo = append(r.memo, k)
}

// finishCase ends the case being read: a test that did not run by its
// attributes (notRun) and has no outcome element is skipped; it is counted
// and handed to fn.
func (r *Reader) finishCase(fn func(*Case) error) error {
	if !r.primarySeen && r.notRun != 0 {
		msg := "disabled"
		if r.notRun == notRunSkipped {
			msg = "skipped"
		}
		r.cur.Outcome = model.Skipped
		r.cur.Detail, r.curDirty = Outcome{Kind: model.Skipped, Message: msg}, true
	}
	switch {
	case r.todoSkipSeen && r.cur.Outcome == model.Failed:
		r.todoSkipped()
	case r.deno && r.cur.Outcome == model.Failed && denoStepsFailed(&r.cur.Detail):
		r.denoStepsPassed()
	}
	r.inCase = false
	r.totals.Add(r.cur.Outcome)
	if fn == nil {
		return nil
	}
	return fn(&r.cur)
}

// rememberBody keeps the content of the testcase being closed with the
// tag it was read from, when the content is short and left the case a
// plain pass (Cucumber writes an empty <system-out> and <system-err> in
// every testcase, Flank an empty <webLink>): the next file's same tag with
// the same content is then a repeat too (caseEnd). Content that says
// anything kept (an outcome, a rerun, properties) is not remembered.
func (r *Reader) rememberBody() {
	k := r.cur.memo
	// An outcome or properties set curDirty.
	if k < 0 || r.cur.memoGen != r.gen || r.bodyAt < r.base ||
		r.curDirty || len(r.cur.Reruns) > 0 {
		return
	}
	body := r.buf[r.bodyAt-r.base : r.pos]
	if len(body) > maxMemoBody || bytes.IndexByte(body, '<') == len(body)-len("</testcase>") {
		return // too long, or empty: caseEnd reads that without a memo
	}
	if m := &r.pool[k]; m.prefix != "" {
		if string(body) != m.body {
			m.body = string(body)
		}
		m.bodyDeep = uint8(r.bodyDeep)
	}
}

// timeThenEnd reads what follows a remembered tag prefix: white space, an
// optional time attribute whose value needs no decoding, the remembered
// attributes after it (suffix, only with a time attribute, with a hole at
// hole as matchHole says), and the end of a testcase with no content or
// with the content body (caseEnd). It returns the offset of the last '>'
// and the time value (nil when absent).
func timeThenEnd(b []byte, suffix string, hole int32, body string) (gt int, val []byte, ok bool) {
	// The common form, ` time="V"/>` with V of seven bytes at most, is
	// read a word at a time: find V's closing quote, and check that no
	// '<' or '&' comes before it.
	if len(b) >= len(` time="`)+8 && string(b[:len(` time="`)]) == ` time="` {
		const v = len(` time="`)
		w := binary.LittleEndian.Uint64(b[v:])
		if q := zeroBytes(w ^ '"'*ones8); q != 0 {
			e := bits.TrailingZeros64(q) / 8 // V's length
			bad := zeroBytes(w^'<'*ones8) | zeroBytes(w^'&'*ones8)
			end := v + e // the closing quote
			if bad&(1<<(8*e)-1) == 0 {
				n, ok := len(suffix), hasPrefix(b[end+1:], suffix)
				if hole != 0 {
					n, ok = matchAround(b[end+1:], suffix, int(hole))
				}
				if ok {
					if gt, ok := caseEnd(b, end+1+n, body); ok {
						return gt, b[v:end], true
					}
				}
			}
		}
	}
	return timeThenEndSlow(b, suffix, hole, body)
}

// timeThenEndSlow is timeThenEnd a byte at a time, for any white space
// and value.
func timeThenEndSlow(b []byte, suffix string, hole int32, body string) (gt int, val []byte, ok bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i > 0 && len(b)-i > len(`time=""`) && string(b[i:i+5]) == "time=" {
		q := b[i+5]
		if q != '"' && q != '\'' {
			return 0, nil, false
		}
		v := i + 6
		e := v
		for e < len(b) && e-v <= maxNumberBytes && b[e] != q {
			if b[e] == '<' || b[e] == '&' {
				return 0, nil, false
			}
			e++
		}
		if e == len(b) || b[e] != q {
			return 0, nil, false
		}
		val = b[v:e]
		i = e + 1
		n, ok := matchHole(b[i:], suffix, hole)
		if !ok {
			return 0, nil, false
		}
		for i += n; i < len(b) && isSpace(b[i]); i++ {
		}
	} else if suffix != "" {
		return 0, nil, false
	}
	if gt, ok := caseEnd(b, i, body); ok {
		return gt, val, true
	}
	return 0, nil, false
}

// caseEnd reads the end of a testcase with no content at b[i], after any
// white space: "/>" (" />" as some pytest versions, xunit.net's logger
// and Android's runner write it), or ">", white space and "</testcase>",
// as Jest, Vitest and Playwright write every test that passed; or ">" and
// body, a remembered content that ends with "</testcase>" (rememberBody).
// It returns the offset of the last '>'.
func caseEnd(b []byte, i int, body string) (gt int, ok bool) {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i+1 >= len(b) {
		return 0, false
	}
	if b[i] == '/' {
		return i + 1, b[i+1] == '>'
	}
	if b[i] != '>' {
		return 0, false
	}
	if body != "" && len(b)-i-1 >= len(body) && string(b[i+1:i+1+len(body)]) == body {
		return i + len(body), true
	}
	for i++; i < len(b) && isSpace(b[i]); i++ {
	}
	const end = "</testcase>"
	if len(b)-i < len(end) || string(b[i:i+len(end)]) != end {
		return 0, false
	}
	return i + len(end) - 1, true
}

// matchHole reports whether b begins with the remembered bytes s and how
// many bytes of b they take. With hole > 0, s is a tag's bytes with the
// value of its testcase timestamp attribute cut out at hole (s[hole-1] is
// its opening quote, s[hole] its closing one): a timestamp differs from run
// to run and says nothing flakegate keeps, so any value matches that a
// fresh read accepts, which is any without '<' (the value of an attribute
// not kept is not decoded).
func matchHole(b []byte, s string, hole int32) (n int, ok bool) {
	if hole != 0 {
		return matchAround(b, s, int(hole))
	}
	return len(s), hasPrefix(b, s)
}

// hasPrefix is matchHole without a hole, for the hot paths: it inlines.
func hasPrefix(b []byte, s string) bool {
	return len(s) <= len(b) && string(b[:len(s)]) == s
}

// matchAround is matchHole with a hole at h.
func matchAround(b []byte, s string, h int) (n int, ok bool) {
	if len(b) < h || string(b[:h]) != s[:h] {
		return 0, false
	}
	e := bytes.IndexByte(b[h:], s[h-1])
	if e < 0 {
		return 0, false
	}
	if bytes.IndexByte(b[h:h+e], '<') >= 0 {
		return 0, false
	}
	rest := s[h:]
	if len(b)-h-e < len(rest) || string(b[h+e:h+e+len(rest)]) != rest {
		return 0, false
	}
	return len(s) + e, true
}

// cutHole is the bytes of a tag remembered for matchHole: b, the part of
// the tag from offset from, with the value at at..end of the tag cut out
// when it lies within b.
func cutHole(b []byte, from, at, end int) (string, int32) {
	if at <= from || end > from+len(b) {
		return string(b), 0
	}
	at, end = at-from, end-from
	return string(b[:at]) + string(b[end:]), int32(at)
}

const (
	ones8  = 0x0101010101010101
	highs8 = 0x8080808080808080
)

// zeroBytes marks with its high bit each zero byte of w, exactly up to the
// first one; a byte above a zero byte may be marked falsely (Hacker's
// Delight's "has a zero byte"). The lowest mark is always exact.
func zeroBytes(w uint64) uint64 { return (w - ones8) &^ w & highs8 }

// attr is one attribute of the start tag being read. Both slices are valid
// until the next tag.
// attr is an attribute of a tag that is not a testcase's: at and end are
// where its value is in the tag as written, before any reference in it is
// decoded.
type attr struct {
	name, value []byte
	at, end     int32
}

// caseAttrs are the attributes flakegate reads from a <testcase>, valid
// until the next tag. A nil value is an absent attribute.
type caseAttrs struct {
	isCase bool
	set    uint8 // which of the fields below this tag has: caName, …

	name, classname, file, line, time, status, result []byte
	// hit is the previous file's tag whose bytes this tag starts with: its
	// attributes before prefixEnd are known without scanning them again.
	hit     *tagMemo
	hitIdx  int32 // hit's index in the pool
	hitNext int   // the position after hit in prevMemo, for the cursor
	hitLen  int   // the bytes of this tag that hit's prefix took (matchHole)
	// prefixEnd ends the part of this tag that a later file may reuse: the
	// white space before the time attribute, which differs from run to run,
	// or the end of the attributes.
	prefixEnd int
	afterTime bool
	// With attributes after time (TestNG, mocha-junit-reporter, minitest),
	// timeEnd is the offset just after the time value and suffixEnd the end
	// of the attributes: the bytes between them are reused too.
	timeEnd, suffixEnd int
	// A testcase timestamp attribute (cargo-nextest, unittest-xml-reporting)
	// differs from run to run: with one, its value is at stampAt..stampEnd,
	// and remembered bytes leave it out (matchHole).
	stampAt, stampEnd, stamps int
}

// maxPool bounds the testcase tags a Reader remembers.
const maxPool = 1 << 16

// maxSeqs bounds the files whose tags a Reader remembers by their first
// tag.
const maxSeqs = 1 << 12

// Bits of caseAttrs.set, in the order of its fields.
const (
	caName uint8 = 1 << iota
	caClass
	caFile
	caLine
	caTime
	caStatus
	caResult
)

// notRun is what a testcase's attributes say of a test that did not run,
// as bits. A case that has them and no outcome element is skipped, as it is
// no evidence of passing: status="disabled" (CTest) or "notrun"
// (GoogleTest), which the conformance corpus counts as skipped, and
// GoogleTest's result="suppressed" (a disabled test) and result="skipped"
// (GTEST_SKIP: GoogleTest 1.10 writes status="run" result="skipped" and
// no <skipped> child, which 1.11 added).
type notRun uint8

const (
	notRunStatus     notRun = 1 << iota // status="disabled" or "notrun"
	notRunSuppressed                    // result="suppressed"
	notRunSkipped                       // result="skipped"
)

// notRunOf returns n with the bits of one attribute replaced by what its
// value v says: the result attribute's when result, else the status's.
func notRunOf(n notRun, v []byte, result bool) notRun {
	if result {
		n &^= notRunSuppressed | notRunSkipped
		switch string(v) {
		case "suppressed":
			n |= notRunSuppressed
		case "skipped":
			n |= notRunSkipped
		}
		return n
	}
	n &^= notRunStatus
	if string(v) == "disabled" || string(v) == "notrun" {
		n |= notRunStatus
	}
	return n
}

// tagMemo is a testcase tag read before: the bytes up to its time
// attribute and what they said. Runs of one suite write the same tests in
// the same order with only the time changed, so most tags of a history
// match the tag at the same place in the previous file.
type tagMemo struct {
	prefix string
	suffix string // the attributes after time, when any
	// Where a timestamp's value was cut out of prefix or suffix (matchHole);
	// 0 when it was not.
	prefixHole, suffixHole int32
	// body is the content of the element this tag opened, through its
	// </testcase>, when it is short and left the case a plain pass
	// (rememberBody); bodyDeep is how deep its elements nest.
	body              string
	bodyDeep          uint8
	name, class, file string
	line              int
	notRun            notRun
}

// errMore asks scanTag's caller to read more input and scan again.
var errMore = errors.New("more input needed")

// scanTag reads the start tag at pos in one pass: its name, and each
// attribute into r.spans, with entity references decoded. It returns the
// offset of the closing '>' from pos and the name's length. A tag that
// runs past the window is scanned again after reading more.
func (r *Reader) scanTag() (gt, nameLen int, err error) {
	gt, nameLen, err = r.scanTagOnce()
	if err != errMore {
		return gt, nameLen, err
	}
	// Read until the whole tag is in the window, then scan it once more:
	// scanning again after every read would be quadratic in the tag's
	// length when the input arrives in small pieces.
	if err := r.bufferTag(); err != nil {
		return 0, 0, err
	}
	gt, nameLen, err = r.scanTagOnce()
	if err == errMore {
		return 0, 0, r.errf(r.pos, "unexpected end of file inside a tag (truncated file?)")
	}
	return gt, nameLen, err
}

// bufferTag reads until the window holds the '>' that closes the tag at
// pos (outside quotes), or a '<' that a scan will refuse. It resumes where
// it stopped after each read.
func (r *Reader) bufferTag() error {
	var quote byte
	i := 1
	for {
		b := r.buf[r.pos:r.end]
		for i < len(b) {
			c := b[i]
			if quote != 0 {
				j := bytes.IndexByte(b[i:], quote)
				if j < 0 {
					i = len(b)
					break
				}
				i += j + 1
				quote = 0
				continue
			}
			switch c {
			case '"', '\'':
				quote = c
			case '>', '<':
				return nil
			}
			i++
		}
		if i > maxTagBytes {
			return r.errf(r.pos, "tag longer than %d bytes", maxTagBytes)
		}
		if !r.fill(r.pos) {
			// fill kept the tag: pos is still its start.
			return r.errf(r.pos, "unexpected end of file inside a tag (truncated file?)")
		}
	}
}

func (r *Reader) scanTagOnce() (gt, nameLen int, err error) {
	r.scans++
	b := r.buf[r.pos:r.end]
	at := r.pos
	r.spans = r.spans[:0]
	r.scratch = r.scratch[:0]
	i := 1
	isCase := len(b) > 9 && string(b[1:9]) == "testcase" && !nameByte[b[9]]
	if isCase {
		i = 9 // the tag of nearly every result
	}
	for i < len(b) && nameByte[b[i]] {
		i++
	}
	nameLen = i - 1
	// A testcase's attributes go straight to their fields. Only the set
	// mask is cleared: the fields it does not name are stale.
	ca := &r.ca
	ca.isCase, ca.set, ca.hit, ca.prefixEnd, ca.afterTime = isCase, 0, nil, 0, false
	ca.timeEnd, ca.suffixEnd, ca.stamps = 0, 0, 0
	if i == len(b) {
		return 0, 0, errMore
	}
	if nameLen == 0 {
		return 0, 0, r.errf(at, "malformed start tag %q", clip(b[1:], 40))
	}
	checked := 1 // bytes of the tag already known free of '<' and '&'
	if r.ca.isCase {
		if len(r.memo) == 0 && len(r.seqs) > 0 {
			r.follow(b)
		}
		// The same bytes as a tag already read mean the same attributes:
		// skip to where they end. Not for a tag with attributes after its
		// time: what they said (one may even restate one of the prefix)
		// would be taken for this tag's.
		for j := r.cursor; j < r.cursor+2 && j < len(r.prevMemo); j++ {
			m := &r.pool[r.prevMemo[j]]
			if m.prefix == "" || m.suffix != "" {
				continue
			}
			if n, ok := matchHole(b, m.prefix, m.prefixHole); ok && len(b) > n {
				r.ca.hit, r.ca.hitIdx, r.ca.hitNext, r.ca.hitLen, i = m, r.prevMemo[j], j+1, n, n
				if h := int(m.prefixHole); h > 0 {
					// This tag's timestamp, in the part skipped.
					r.ca.stampAt, r.ca.stampEnd, r.ca.stamps = h, h+n-len(m.prefix), 1
				}
				checked = i
				break
			}
		}
	}
	for {
		sp := i
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return 0, 0, errMore
		}
		switch b[i] {
		case '>':
			r.endCase(sp)
			return i, nameLen, r.values(b[:i], at, checked)
		case '/':
			if i+1 == len(b) {
				return 0, 0, errMore
			}
			if b[i+1] != '>' {
				return 0, 0, r.errf(at, "malformed start tag near %q", clip(b[i:], 20))
			}
			r.endCase(sp)
			return i + 1, nameLen, r.values(b[:i], at, checked)
		case '<':
			return 0, 0, r.errf(at, "'<' inside a tag")
		}
		if sp == i {
			return 0, 0, r.errf(at, "attributes must be separated by white space near %q", clip(b[i:], 20))
		}
		ns := i
		for i < len(b) && nameByte[b[i]] {
			i++
		}
		if i == len(b) {
			return 0, 0, errMore
		}
		if ns == i {
			return 0, 0, r.errf(at, "malformed attribute near %q", clip(b[i:], 20))
		}
		name := b[ns:i]
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return 0, 0, errMore
		}
		if b[i] != '=' {
			return 0, 0, r.errf(at, "attribute %s has no value", clip(name, 40))
		}
		i++
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return 0, 0, errMore
		}
		q := b[i]
		if q != '"' && q != '\'' {
			return 0, 0, r.errf(at, "attribute %s value is not quoted", clip(name, 40))
		}
		e := indexQuote(b[i+1:], q)
		if e < 0 {
			return 0, 0, errMore
		}
		if v := b[i+1 : i+1+e]; r.ca.isCase {
			if r.ca.prefixEnd > 0 {
				r.ca.afterTime = true
			}
			switch string(name) {
			case "name":
				r.ca.name, r.ca.set = v, r.ca.set|caName
			case "classname":
				r.ca.classname, r.ca.set = v, r.ca.set|caClass
			case "file":
				r.ca.file, r.ca.set = v, r.ca.set|caFile
			case "line":
				r.ca.line, r.ca.set = v, r.ca.set|caLine
			case "time":
				r.ca.time, r.ca.set = v, r.ca.set|caTime
				r.ca.prefixEnd, r.ca.afterTime = sp, false
				r.ca.timeEnd = i + e + 2
			case "timestamp":
				r.ca.stampAt, r.ca.stampEnd, r.ca.stamps = i+1, i+1+e, r.ca.stamps+1
			case "status":
				r.ca.status, r.ca.set = v, r.ca.set|caStatus
			case "result":
				r.ca.result, r.ca.set = v, r.ca.set|caResult
			}
		} else {
			r.spans = append(r.spans, attr{name, v, int32(i + 1), int32(i + 1 + e)})
		}
		i += e + 2
	}
}

// follow picks the earlier file whose tags this file's are likely to
// repeat, from its first testcase tag b: the file that began with the same
// bytes up to the time attribute.
func (r *Reader) follow(b []byte) {
	key, ok := r.memoKey(b)
	if !ok {
		return
	}
	if seq, ok := r.seqs[string(key)]; ok {
		r.prevMemo, r.cursor, r.prevPosOK = seq, 0, false
	}
}

// memoKey is the prefix a tag starting at b would be remembered by, when
// it has a time attribute: its bytes up to the time, with a timestamp's
// value left out as cutHole leaves it out. It may use r.keyBuf.
func (r *Reader) memoKey(b []byte) ([]byte, bool) {
	b = b[:min(len(b), maxMemoPrefix+len(" time="))]
	k := bytes.Index(b, []byte(" time="))
	if k < 0 {
		return nil, false
	}
	key := b[:k]
	const stamp = ` timestamp=`
	if i := bytes.Index(key, []byte(stamp)); i >= 0 && i+len(stamp) < len(key) {
		v := i + len(stamp) + 1
		if e := bytes.IndexByte(key[v:], key[v-1]); e >= 0 {
			r.keyBuf = append(append(r.keyBuf[:0], key[:v]...), key[v+e:]...)
			key = r.keyBuf
		}
	}
	return key, true
}

// resync finds the place in the previous file of the testcase tag at
// buf[at] when it is not at the cursor: the tags of a run's merged report
// come in another order when its suites or tests finished in another
// order (Jest with several workers, pytest-xdist). It reports the place,
// not yet tried, and false when the tag was not in that file.
func (r *Reader) resync(at int) (int, bool) {
	b := r.buf[at:r.end]
	if !hasPrefix(b, "<testcase ") || len(r.prevMemo) == 0 {
		return 0, false
	}
	if r.startsAs(b, r.cursor) {
		return 0, false // in its place, with another ending (an outcome, output)
	}
	// A test run again after it failed (pytest-rerunfailures) writes its
	// tag twice: the second is the tag just before the cursor.
	if j := r.cursor - 1; r.startsAs(b, j) {
		return j, true
	}
	key, ok := r.memoKey(b)
	if !ok {
		return 0, false
	}
	for ; r.indexed < len(r.pool); r.indexed++ {
		if p := r.pool[r.indexed].prefix; p != "" {
			r.byPrefix[p] = int32(r.indexed)
		}
	}
	k, ok := r.byPrefix[string(key)]
	if !ok {
		return 0, false
	}
	if !r.prevPosOK {
		// Once per file that needs it: where each tag is in prevMemo. A
		// tag remembered since is not in it.
		r.prevPos = slices.Grow(r.prevPos[:0], len(r.pool))[:len(r.pool)]
		for i := range r.prevPos {
			r.prevPos[i] = -1
		}
		for j, m := range r.prevMemo {
			r.prevPos[m] = int32(j)
		}
		r.prevPosOK = true
	}
	if int(k) >= len(r.prevPos) {
		return 0, false
	}
	j := int(r.prevPos[k])
	if j < 0 || j == r.cursor || j == r.cursor+1 {
		return 0, false
	}
	return j, true
}

// startsAs reports whether b begins with the prefix of the tag at place j
// of prevMemo, when there is one.
func (r *Reader) startsAs(b []byte, j int) bool {
	if j < 0 || j >= len(r.prevMemo) {
		return false
	}
	m := &r.pool[r.prevMemo[j]]
	_, ok := matchHole(b, m.prefix, m.prefixHole)
	return m.prefix != "" && ok
}

// indexQuote is bytes.IndexByte for the quote that ends an attribute
// value: most values are a few bytes long, so it looks at those itself
// before calling IndexByte.
func indexQuote(b []byte, q byte) int {
	n := min(len(b), 16)
	for i := 0; i < n; i++ {
		if b[i] == q {
			return i
		}
	}
	if j := bytes.IndexByte(b[n:], q); j >= 0 {
		return n + j
	}
	return -1
}

// endCase fixes where a testcase tag's reusable parts end: before its time
// attribute and, when attributes follow it, at the end of the attributes;
// or at the end of the attributes when it has no time.
func (r *Reader) endCase(end int) {
	switch {
	case !r.ca.isCase:
	case r.ca.afterTime:
		r.ca.suffixEnd = end
	case r.ca.set&caTime == 0:
		r.ca.prefixEnd = end
	}
}

// values checks the attribute values of a whole tag at once, which is
// cheaper than value by value: no '<' anywhere (outside values it ended
// the tag already), and entity references decoded where there are any.
func (r *Reader) values(tag []byte, at, checked int) error {
	if rest := tag[checked:]; len(rest) <= 32 {
		// What is left after a remembered prefix, usually the time
		// attribute: a loop costs less than two calls.
		clean := true
		for _, c := range rest {
			if c == '<' || c == '&' {
				clean = false
				break
			}
		}
		if clean {
			return nil
		}
	}
	if bytes.IndexByte(tag[checked:], '<') >= 0 {
		for _, a := range r.spans {
			if bytes.IndexByte(a.value, '<') >= 0 {
				return r.errf(at, "'<' in the value of attribute %s", clip(a.name, 40))
			}
		}
		return r.errf(at, "'<' in an attribute value")
	}
	if bytes.IndexByte(tag[checked:], '&') < 0 {
		return nil
	}
	// A testcase tag stays reusable: the same bytes decode the same way,
	// and the remembered fields are the decoded values.
	for k, f := range []*[]byte{&r.ca.name, &r.ca.classname, &r.ca.file, &r.ca.line, &r.ca.time, &r.ca.status, &r.ca.result} {
		if r.ca.set&(1<<k) != 0 && bytes.IndexByte(*f, '&') >= 0 {
			v, err := r.decode(*f, at)
			if err != nil {
				return err
			}
			*f = v
		}
	}
	for k := range r.spans {
		a := &r.spans[k]
		if bytes.IndexByte(a.value, '&') >= 0 {
			v, err := r.decode(a.value, at)
			if err != nil {
				return err
			}
			a.value = v
		}
	}
	return nil
}

// attrs calls fn for each attribute of the tag just scanned.
func (r *Reader) attrs(fn func(name, value []byte)) {
	for _, a := range r.spans {
		fn(a.name, a.value)
	}
}

func (r *Reader) decode(v []byte, at int) ([]byte, error) {
	start := len(r.scratch)
	out := r.scratch
	for len(v) > 0 {
		k := bytes.IndexByte(v, '&')
		if k < 0 {
			out = append(out, v...)
			break
		}
		out = append(out, v[:k]...)
		n, dec, err := entity(v[k:])
		if err != nil {
			return nil, r.errf(at, "%v", err)
		}
		out = append(out, dec...)
		v = v[k+n:]
	}
	r.scratch = out
	// Earlier values decoded for this tag keep the old backing array when
	// append grew it, so they stay valid.
	return out[start:len(out):len(out)], nil
}

func (r *Reader) str(b []byte) string { return r.intern1(b) }

// caseName interns a testcase name, first checking the name at the same
// position in the previous file: runs of one suite list tests in the same
// order.
func (r *Reader) caseName(b []byte) string {
	for j := r.cursor; j < r.cursor+2 && j < len(r.prevMemo); j++ {
		if n := r.pool[r.prevMemo[j]].name; n == string(b) {
			r.cursor = j + 1
			return n
		}
	}
	return r.intern1(b)
}

// strLast interns b, first checking the previous value of the same
// attribute: classnames and files repeat from one testcase to the next.
func (r *Reader) strLast(b []byte, last *string) string {
	if s := *last; len(s) == len(b) && s == string(b) {
		return s
	}
	*last = r.intern1(b)
	return *last
}

func (r *Reader) intern1(b []byte) string {
	if len(b) > MaxNameBytes {
		r.cutBuf = appendCutName(r.cutBuf[:0], b)
		b = r.cutBuf
	}
	if s, ok := r.intern[string(b)]; ok {
		return s
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	r.intern[s] = s
	return s
}

func text(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (r *Reader) open(kind elemKind, at int) error {
	depth := len(r.stack)
	switch kind {
	case elemSuites, elemSuite:
		if r.inCase {
			// A suite inside a testcase is not JUnit; treat it as unknown.
			r.stack[depth-1].kind = elemOther
			return nil
		}
		s := r.newSuite()
		s.Parent = r.suite
		for _, a := range r.spans {
			switch string(a.name) {
			case "name":
				s.Name = r.strLast(a.value, &r.lastSuite)
			case "timestamp":
				s.Timestamp = r.stamp(a.value)
			case "hostname":
				s.Hostname = r.strLast(a.value, &r.lastHost)
			}
		}
		r.suite = s
		if depth == 1 {
			r.rootConventions(kind, s.Name)
		}
		return nil
	case elemCase:
		if r.inCase {
			r.stack[depth-1].kind = elemOther
			return nil
		}
		r.inCase, r.caseLvl = true, depth
		r.bodyAt, r.bodyDeep = -1, 0
		r.resetCase()
		ca := &r.ca
		if h := ca.hit; h != nil && ca.prefixEnd == ca.hitLen &&
			ca.set&^caTime == 0 {
			// The tag as read before, but for its time.
			var timeAttr []byte
			if ca.set&caTime != 0 {
				timeAttr = ca.time
			}
			r.caseFromMemo(h, ca.hitIdx, ca.hitNext, timeAttr)
			return nil
		}
		var m tagMemo
		if ca.hit != nil {
			m, r.cursor = *ca.hit, ca.hitNext
		}
		if ca.set&caName != 0 {
			m.name = r.caseName(ca.name)
		}
		if ca.set&caClass != 0 {
			m.class = r.strLast(ca.classname, &r.lastClass)
			if r.karmaFrom != "" {
				m.class = r.karmaClass(m.class)
			}
		}
		if ca.set&caFile != 0 {
			m.file = r.strLast(ca.file, &r.lastFile)
		}
		if ca.set&caLine != 0 && len(ca.line) <= maxNumberBytes {
			m.line = parseLine(ca.line)
		}
		// Rare attributes: a remembered prefix's say stands unless the
		// tag restates it.
		if ca.set&(caStatus|caResult) != 0 {
			if ca.set&caStatus != 0 {
				m.notRun = notRunOf(m.notRun, ca.status, false)
			}
			if ca.set&caResult != 0 {
				m.notRun = notRunOf(m.notRun, ca.result, true)
			}
		}
		r.cur.setNames(m.name, m.class, m.file)
		r.cur.line = m.line
		if ca.set&caTime != 0 && len(ca.time) <= maxNumberBytes {
			r.cur.setTime(ca.time)
		}
		r.notRun, r.primarySeen = m.notRun, false
		if len(r.pool) >= maxPool {
			return nil // remembered tags are full until the next file
		}
		m.prefix, m.suffix, m.prefixHole, m.suffixHole = "", "", 0, 0
		if ca.prefixEnd > 0 && ca.prefixEnd <= maxMemoPrefix && ca.suffixEnd-ca.timeEnd <= maxMemoPrefix {
			at, end := 0, 0 // no hole
			if ca.stamps == 1 {
				at, end = ca.stampAt, ca.stampEnd
			}
			tag := r.buf[r.pos:]
			m.prefix, m.prefixHole = cutHole(tag[:ca.prefixEnd], 0, at, end)
			if ca.suffixEnd > 0 {
				m.suffix, m.suffixHole = cutHole(tag[ca.timeEnd:ca.suffixEnd], ca.timeEnd, at, end)
			}
		}
		r.pool = append(r.pool, m)
		r.memo = append(r.memo, int32(len(r.pool)-1))
		if m.prefix != "" {
			r.cur.memo, r.cur.memoGen = int32(len(r.pool)-1), r.gen
		}
		return nil
	case elemFailure, elemError, elemSkipped, elemFlakyFailure, elemFlakyError, elemRerunFailure, elemRerunError:
		if !r.inCase || depth != r.caseLvl+1 {
			return nil
		}
		r.outLvl = depth
		r.out = Outcome{}
		switch kind {
		case elemFailure:
			r.outKind, r.out.Kind = outPrimary, model.Failed
		case elemError:
			r.outKind, r.out.Kind = outPrimary, model.Error
		case elemSkipped:
			r.outKind, r.out.Kind = outPrimary, model.Skipped
		case elemFlakyFailure, elemRerunFailure:
			r.outKind, r.out.Kind = outRerun, model.Failed
		default:
			r.outKind, r.out.Kind = outRerun, model.Error
		}
		r.out.Flaky = kind == elemFlakyFailure || kind == elemFlakyError
		r.text, r.textCut = r.text[:0], 0
		r.capturing = r.out.Kind != model.Skipped
		r.attrs(func(name, v []byte) {
			switch string(name) {
			case "message":
				r.out.Message = cutText(v, MaxMessageBytes)
			case "type":
				if len(v) > maxTypeBytes {
					r.out.Type = cutText(v, maxTypeBytes)
				} else {
					r.out.Type = r.str(v)
				}
			}
		})
	case elemSystemOut, elemSystemErr:
		if r.outLvl > 0 && r.skipLvl == 0 {
			r.skipLvl = depth
		}
		return nil
	case elemProperties:
		if r.propsLvl == 0 && r.outLvl == 0 {
			if len(r.propCur) > 0 {
				r.propPrev, r.propCur = r.propCur, r.propPrev[:0]
			}
			r.propAt = 0
			parent := r.stack[depth-2].kind
			switch {
			case parent == elemCase && r.inCase:
				r.propsLvl, r.propsDst, r.curDirty = depth, &r.cur.Props, true
			case (parent == elemSuite || parent == elemSuites) && r.suite != nil:
				r.propsLvl, r.propsDst = depth, &r.suite.Props
			}
		}
		return nil
	case elemProperty:
		if r.propsLvl == 0 || depth != r.propsLvl+1 {
			return nil
		}
		pname := propNone
		var value []byte
		hasValue := false
		for _, a := range r.spans {
			switch string(a.name) {
			case "name":
				pname = runProperty(a.value)
			case "value":
				value, hasValue = a.value, true
			}
		}
		if pname == propNone {
			r.propRead = propMemo{ok: true}
			return nil
		}
		if hasValue {
			if len(value) > maxPropertyBytes {
				value = appendCut(nil, value, maxPropertyBytes)
			}
			r.setProp(r.propsDst, pname, value)
			r.propRead = propMemo{ok: true, kind: pname, props: *r.propsDst}
			if pname == propCommitOther {
				// What this tag says, whatever the suite held before it.
				r.propRead.props = Props{CommitSHA: r.commitOther(value)}
			}
			return nil
		}
		// The value may be the element's text.
		r.propLvl, r.propName, r.propDst = depth, pname, r.propsDst
		r.text, r.textCut = r.text[:0], 0
		r.capturing = true
		return nil
	}
	return nil
}

// resetCase readies r.cur for the next testcase. Nearly every field is
// already what it must be: writing only those that are not saves the
// write barriers that storing pointers costs while the GC marks.
func (r *Reader) resetCase() {
	c := &r.cur
	if c.Suite != r.suite {
		c.Suite = r.suite
	}
	if len(c.Reruns) > 0 {
		clear(c.Reruns)
		c.Reruns = c.Reruns[:0]
	}
	c.Outcome, c.line, c.timeLen, c.memo = model.Passed, 0, 0, -1
	r.todoSkipSeen = false
	if r.curDirty {
		c.Detail, c.Props, r.curDirty = Outcome{}, Props{}, false
	}
}

// setNames sets a case's names, writing only those that change. Names are
// interned, so the same name is the same string: comparing where the bytes
// are is enough, and cheaper than comparing them.
func (c *Case) setNames(name, class, file string) {
	if !same(c.Name, name) {
		c.Name = name
	}
	if !same(c.Classname, class) {
		c.Classname = class
	}
	if !same(c.File, file) {
		c.File = file
	}
}

func same(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// setTime keeps a time attribute of at most maxNumberBytes bytes. The
// values are a few bytes long: a loop is cheaper than a call to copy.
func (c *Case) setTime(v []byte) {
	//lint:ignore S1001 measured: the loop beats a call to copy for a few bytes
	for i, b := range v {
		c.time[i] = b
	}
	c.timeLen = uint8(len(v))
}

// propMemo is what a self-closing <property> tag did: set the run
// property kind, to its value in props, or nothing (propNone). tag is the
// tag, whole.
type propMemo struct {
	ok    bool
	kind  propKind
	props Props
	tag   string
}

// maxPropTag bounds the tags propTags keeps, and maxPropTags their number.
const (
	maxPropTag  = 512
	maxPropTags = 4096
)

// repeatProperty reads the tag at pos when it is a self-closing <property>
// directly inside <properties> whose bytes were read before, and does what
// it did. It reports false, having changed nothing, otherwise.
func (r *Reader) repeatProperty() bool {
	if r.propsLvl == 0 || len(r.stack) != r.propsLvl || r.capturing || len(r.propTags) == 0 {
		return false
	}
	b := r.buf[r.pos:min(r.end, r.pos+maxPropTag+1)]
	var m propMemo
	// A remembered tag holds one '>', its last byte: bytes that begin
	// with it are that tag.
	if i := r.propAt; i < len(r.propPrev) && len(b) >= len(r.propPrev[i].tag) && string(b[:len(r.propPrev[i].tag)]) == r.propPrev[i].tag {
		m = r.propPrev[i]
	} else {
		gt := bytes.IndexByte(b, '>')
		if gt < 0 {
			return false
		}
		var ok bool
		if m, ok = r.propTags[string(b[:gt+1])]; !ok {
			return false
		}
	}
	gt := len(m.tag) - 1
	r.propAt++
	if len(r.propCur) < maxPropTags {
		r.propCur = append(r.propCur, m)
	}
	switch m.kind {
	case propCommit:
		r.propsDst.CommitSHA, r.lastCommit = m.props.CommitSHA, m.props.CommitSHA
	case propCommitOther:
		if r.bun && r.propsDst != &r.cur.Props && r.propsDst.CommitSHA == "" && m.props.CommitSHA != "" {
			r.propsDst.CommitSHA, r.lastCommit = m.props.CommitSHA, m.props.CommitSHA
		}
	case propRunID:
		r.propsDst.RunID, r.lastRunID = m.props.RunID, m.props.RunID
	case propAttempt:
		r.propsDst.RunAttempt = m.props.RunAttempt
	}
	r.repeats++
	r.pos += gt + 1
	return true
}

// suiteMemo is a <testsuite> tag below the root read before: its bytes
// with the values of its time and timestamp attributes cut out, which
// differ from run to run, and what the rest said.
type suiteMemo struct {
	tag        string   // '<' to '>', without the values at holes; "" for a tag not remembered
	holes      [2]int32 // where values were cut, in order (tag[h-1] is the opening quote); 0 for none
	stamp      int8     // the hole of the timestamp's value, or -1
	nameLen    int8     // the element's name is tag[1 : 1+nameLen]
	kind       elemKind // elemSuite or elemSuites
	name, host string
}

// maxSuiteTag bounds a remembered suite tag; maxSuiteMemos bounds the
// suite tags of one file remembered.
const (
	maxSuiteTag   = 1 << 10
	maxSuiteMemos = 1 << 12
)

// suiteBelowRoot reports whether the element just pushed is a suite below
// the root, which repeatSuite could have read (a suite inside a testcase
// is read as another element).
func (r *Reader) suiteBelowRoot() bool {
	n := len(r.stack)
	return n >= 2 && r.stack[n-1].kind != elemOther
}

// rememberSuite notes the suite tag at buf[at:at+gt+1] just opened for
// repeatSuite, in its place among the file's suite tags.
func (r *Reader) rememberSuite(at, gt int, selfClose bool) {
	if len(r.suiteCur) >= maxSuiteMemos {
		return
	}
	r.suiteAt++
	m := suiteMemo{stamp: -1}
	if !selfClose && gt < maxSuiteTag {
		m = r.suiteMemoOf(r.buf[at : at+gt+1])
	}
	r.suiteCur = append(r.suiteCur, m)
}

// suiteMemoOf remembers tag, the suite just opened, unless it has more
// than one time or timestamp attribute.
func (r *Reader) suiteMemoOf(tag []byte) suiteMemo {
	var cut [2]attr
	n := 0
	stamp, times := -1, 0
	for _, a := range r.spans {
		switch string(a.name) {
		case "time":
			times++
		case "timestamp":
			if stamp >= 0 {
				return suiteMemo{stamp: -1}
			}
			stamp = n
		default:
			continue
		}
		if times > 1 {
			return suiteMemo{stamp: -1}
		}
		cut[n] = a
		n++
	}
	m := suiteMemo{stamp: int8(stamp), nameLen: int8(len(r.nameArena) - r.stack[len(r.stack)-1].nameOff), kind: r.stack[len(r.stack)-1].kind}
	if s := r.suite; s != nil {
		m.name, m.host = s.Name, s.Hostname
	}
	b := make([]byte, 0, len(tag))
	from := 0
	for k := range n {
		b = append(b, tag[from:cut[k].at]...)
		m.holes[k] = int32(len(b))
		from = int(cut[k].end)
	}
	m.tag = string(append(b, tag[from:]...))
	return m
}

// repeatSuite reads the suite tag at pos when it repeats, but for the
// values of its time and timestamp attributes, the tag at its place in the
// previous file, or the last suite tag of this file: what startTag and
// open do for it, without scanning its attributes. It reports false,
// having changed nothing, for any other tag.
func (r *Reader) repeatSuite() bool {
	if len(r.stack) == 0 || len(r.stack) >= MaxDepth || r.inCase || len(r.suiteCur) >= maxSuiteMemos {
		return false
	}
	b := r.buf[r.pos:r.end]
	var m *suiteMemo
	var n int
	var vals [2][]byte
	ok := false
	if i := r.suiteAt; i < len(r.suitePrev) && r.suitePrev[i].tag != "" {
		m = &r.suitePrev[i]
		n, vals, ok = matchHoles(b, m.tag, m.holes)
	}
	if k := len(r.suiteCur) - 1; !ok && k >= 0 && r.suiteCur[k].tag != "" {
		m = &r.suiteCur[k]
		n, vals, ok = matchHoles(b, m.tag, m.holes)
	}
	if !ok {
		return false
	}
	r.stack = append(r.stack, frame{nameOff: len(r.nameArena), nameLen: int(m.nameLen), kind: m.kind})
	r.nameArena = append(r.nameArena, m.tag[1:1+m.nameLen]...)
	r.propRead.ok = false
	s := r.newSuite()
	s.Parent, s.Name, s.Hostname = r.suite, m.name, m.host
	if m.stamp >= 0 {
		s.Timestamp = r.stamp(vals[m.stamp])
	}
	r.suite = s
	r.suiteAt++
	r.suiteCur = append(r.suiteCur, *m)
	r.suiteRepeats++
	r.pos += n
	return true
}

// matchHoles reports whether b begins with the tag s remembered with the
// values at holes cut out, and returns its length and those values. Any
// value matches that a fresh read would take as written: one without '<'
// or '&'.
func matchHoles(b []byte, s string, holes [2]int32) (n int, vals [2][]byte, ok bool) {
	bi, si := 0, 0
	for k, h := range holes {
		if h == 0 {
			break
		}
		seg := s[si:h]
		if !hasPrefix(b[bi:], seg) {
			return 0, vals, false
		}
		bi += len(seg)
		e := bytes.IndexByte(b[bi:], s[h-1])
		if e < 0 {
			return 0, vals, false
		}
		v := b[bi : bi+e]
		for _, c := range v {
			if c == '<' || c == '&' {
				return 0, vals, false
			}
		}
		vals[k] = v
		bi, si = bi+e, int(h)
	}
	if !hasPrefix(b[bi:], s[si:]) {
		return 0, vals, false
	}
	return bi + len(s) - si, vals, true
}

// propKind is a run property flakegate reads.
type propKind uint8

const (
	propNone propKind = iota
	propCommit
	// propCommitOther is Bun's "commit" property (writers.go): a commit
	// when its value is one, and when the suite states no commit_sha.
	propCommitOther
	propRunID
	propAttempt
)

// runProperty says which run property a <property> name is, comparing
// bytes: no string is made for the names of the many properties (Surefire
// writes every system property) that are not read.
func runProperty(name []byte) propKind {
	switch string(name) {
	case "commit_sha":
		return propCommit
	case "commit":
		return propCommitOther
	case "run_id":
		return propRunID
	case "run_attempt":
		return propAttempt
	}
	return propNone
}

// setProp stores a run property's value. Commit and run values repeat in
// every suite of a run: the last one read is reused when the bytes match.
func (r *Reader) setProp(p *Props, kind propKind, v []byte) {
	v = bytes.TrimSpace(v)
	switch kind {
	case propCommit:
		p.CommitSHA = r.reuse(&r.lastCommit, v)
	case propCommitOther:
		if sha := r.commitOther(v); sha != "" && p.CommitSHA == "" {
			p.CommitSHA = sha
		}
	case propRunID:
		p.RunID = r.reuse(&r.lastRunID, v)
	case propAttempt:
		p.RunAttempt = atoi(v)
	}
}

func (r *Reader) reuse(last *string, v []byte) string {
	if string(v) != *last {
		*last = text(v)
	}
	return *last
}

// atoi reads a decimal integer as strconv.Atoi does, or 0.
func atoi(v []byte) int {
	if len(v) > 0 && len(v) < 10 {
		neg := v[0] == '-'
		n, i := 0, 0
		if v[0] == '+' || neg {
			i = 1
		}
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			n = n*10 + int(v[i]-'0')
		}
		if i == len(v) && (i > 1 || !(v[0] == '+' || neg)) {
			if neg {
				return -n
			}
			return n
		}
		return 0
	}
	n, _ := strconv.Atoi(string(v))
	return n
}

// suiteChunk is how many suites newSuite allocates at once.
const suiteChunk = 64

// newSuite returns a zero Suite. Suites outlive the file (a Case keeps its
// Suite), so they are carved from chunks that are never reused.
func (r *Reader) newSuite() *Suite {
	if len(r.suiteSlab) == cap(r.suiteSlab) {
		r.suiteSlab = make([]Suite, 0, suiteChunk)
	}
	r.suiteSlab = r.suiteSlab[:len(r.suiteSlab)+1]
	return &r.suiteSlab[len(r.suiteSlab)-1]
}

// stamp reads a suite timestamp: the last one again when the bytes are the
// same, and otherwise first in the layout that read the last one.
func (r *Reader) stamp(v []byte) time.Time {
	if r.lastStamp != nil && bytes.Equal(v, r.lastStamp) {
		return r.lastTime
	}
	t, k := parseTimeFrom(v, r.stampLayout)
	if k >= 0 {
		r.stampLayout = k
	}
	r.lastStamp, r.lastTime = append(r.lastStamp[:0], v...), t
	return t
}

func (r *Reader) close(f frame, fn func(*Case) error) error {
	depth := len(r.stack)
	r.stack = r.stack[:depth-1]
	r.nameArena = r.nameArena[:f.nameOff]
	if depth == 1 {
		r.rootDone = true
	}
	switch {
	case r.skipLvl == depth:
		r.skipLvl = 0
	case r.propLvl == depth:
		if r.textCut > 0 {
			r.text = markCut(r.text, r.textCut)
		}
		r.setProp(r.propDst, r.propName, r.text)
		r.propLvl, r.capturing = 0, false
	case r.propsLvl == depth:
		r.propsLvl, r.propsDst = 0, nil
	case r.outLvl == depth:
		t := bytes.TrimSpace(r.text)
		if r.textCut > 0 {
			t = markCut(t, r.textCut)
		}
		r.out.Text = text(t)
		switch {
		case r.outKind == outRerun:
			r.cur.Reruns = append(r.cur.Reruns, r.out)
		case !r.primarySeen || r.out.Kind > r.cur.Outcome:
			// error > failure > skipped; the first element of the winning
			// kind is kept.
			r.cur.Outcome, r.cur.Detail, r.primarySeen, r.curDirty = r.out.Kind, r.out, true, true
		}
		if r.outKind == outPrimary && r.out.Kind == model.Skipped && !r.todoSkipSeen && nodeSkipType(r.out.Type) {
			r.todoSkip, r.todoSkipSeen = r.out, true
		}
		r.outLvl, r.outKind, r.capturing = 0, outNone, false
	case f.kind == elemCase && r.inCase && r.caseLvl == depth:
		r.rememberBody()
		if err := r.finishCase(fn); err != nil {
			return err
		}
	case (f.kind == elemSuite || f.kind == elemSuites) && r.suite != nil:
		r.suite = r.suite.Parent
	}
	return nil
}

// parseDuration reads a JUnit time attribute in seconds. It accepts
// thousands separators ("1,234.5"), a decimal comma ("0,5") and a trailing
// unit-less value; anything else, or a negative value, is zero.
func parseDuration(v []byte) time.Duration {
	if d, ok := simpleSeconds(v); ok {
		return d
	}
	s := strings.TrimSpace(string(v))
	if s == "" {
		return 0
	}
	if strings.IndexByte(s, ',') >= 0 {
		if strings.IndexByte(s, '.') >= 0 || thousands(s) {
			s = strings.ReplaceAll(s, ",", "")
		} else {
			s = strings.Replace(s, ",", ".", 1)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// simpleSeconds parses the common form "12.345" (at most 9 decimals)
// without allocating.
func simpleSeconds(v []byte) (time.Duration, bool) {
	var whole, frac int64
	i := 0
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		whole = whole*10 + int64(v[i]-'0')
		if whole > 1e9 {
			return 0, false
		}
	}
	if i == 0 {
		return 0, false
	}
	scale := int64(time.Second)
	if i < len(v) {
		if v[i] != '.' || i+1 == len(v) || len(v)-i-1 > 9 {
			return 0, false
		}
		for i++; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return 0, false
			}
			frac = frac*10 + int64(v[i]-'0')
			scale /= 10
		}
	}
	return time.Duration(whole)*time.Second + time.Duration(frac*scale), true
}

// thousands reports whether s looks like "1,234" or "12,345,678".
func thousands(s string) bool {
	parts := strings.Split(s, ",")
	if len(parts[0]) == 0 || len(parts[0]) > 3 {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) != 3 {
			return false
		}
	}
	return true
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999-0700",
}

// parseTimeFrom reads a suite timestamp trying timeLayouts[first] first.
// It returns the index of the layout that read it, or -1.
func parseTimeFrom(v []byte, first int) (time.Time, int) {
	if len(v) > maxNumberBytes {
		return time.Time{}, -1
	}
	if t, k, ok := isoStamp(v); ok {
		return t, k
	}
	s := strings.TrimSpace(string(v))
	if first > 0 && first < len(timeLayouts) {
		if t, err := time.Parse(timeLayouts[first], s); err == nil {
			return t.UTC(), first
		}
	}
	for k, l := range timeLayouts {
		if k == first && k > 0 {
			continue
		}
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), k
		}
	}
	return time.Time{}, -1
}

// isoStamp reads the timestamps nearly every tool writes,
// "2006-01-02T15:04:05", with a fraction of up to nine digits and a "Z" or
// not, as time.Parse reads them with timeLayouts[0] ("Z") or [1], without
// its cost: Surefire writes a timestamp in every file of a class, and no
// two are alike. It reports false for anything else, valid or not, which
// time.Parse then reads.
func isoStamp(v []byte) (time.Time, int, bool) {
	if len(v) < 19 || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, 0, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(v[0:4]), num(v[5:7]), num(v[8:10])
	hour, minute, sec := num(v[11:13]), num(v[14:16]), num(v[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(time.Month(month), year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, 0, false
	}
	rest, nsec := v[19:], 0
	if len(rest) > 0 && rest[0] == '.' {
		digits := 0
		for digits+1 < len(rest) && rest[digits+1] >= '0' && rest[digits+1] <= '9' {
			digits++
		}
		if digits == 0 || digits > 9 {
			return time.Time{}, 0, false
		}
		nsec = num(rest[1 : 1+digits])
		for range 9 - digits {
			nsec *= 10
		}
		rest = rest[1+digits:]
	}
	k := 1
	switch string(rest) {
	case "":
	case "Z":
		k = 0
	default:
		return time.Time{}, 0, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), k, true
}

// daysIn is the number of days in a month of the proleptic Gregorian
// calendar.
func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + int((m+m/8)%2)
}

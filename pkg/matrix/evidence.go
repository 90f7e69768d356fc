package matrix

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/text/encoding/unicode"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// Every run's file holds one more test case, the run itself, so that a run
// that crashed is a failure the gate reads like any other: a crash on head
// only is a patch-induced flake or a regression of this test, a crash in
// every base run a red base. It passes when the command exited 0, or
// exited otherwise with a failing test in its JUnit file (the usual
// reason); it fails, naming the exit status, when the command exited
// non-zero with no failing test, or left no readable JUnit file, which its
// run's file then consists of.
const (
	RunClass = "flakegate.matrix"
	RunName  = "the test command"
)

// RunTest is the run's test case as the gate names it.
const RunTest = RunClass + "::" + RunName

// report is what a run's JUnit file says, as flakegate gate reads it.
type report struct {
	failed int // failing test cases
	cases  int // test cases
	runs   []history.Run
	broken string // why the file is not usable; "" when it is
}

// readReport reads the JUnit document doc, named name, as `flakegate gate`
// would read the file: without the run the driver knows it belongs to.
func readReport(ctx context.Context, name string, doc []byte) (report, error) {
	src := history.Source{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(doc)), nil }}
	h, err := history.Load(ctx, []history.Source{src}, history.Options{Workers: 1})
	if err != nil {
		return report{}, err
	}
	if len(h.Skipped) > 0 {
		return report{broken: h.Skipped[0].Error}, nil
	}
	return report{failed: h.Totals.Failed + h.Totals.Errors, cases: h.Totals.Testcases, runs: h.Runs}, nil
}

// runFailure is why the run failed as a whole, or "" when its test case
// passes. exit says how the command ended ("exited with status 2").
func runFailure(exitCode int, exit string, rep report, junitPath string, missing bool) string {
	switch {
	case missing:
		return fmt.Sprintf("the test command %s and wrote no JUnit file at %s: it crashed before writing it, or the JUnit path is wrong", exit, junitPath)
	case rep.broken != "":
		return fmt.Sprintf("the test command %s and its JUnit file at %s is not usable (%s): it crashed while writing it, or wrote something else", exit, junitPath, rep.broken)
	case exitCode != 0 && rep.failed == 0:
		return fmt.Sprintf("the test command %s, but no test failed in its JUnit file (%d test cases): it crashed, or failed outside any test", exit, rep.cases)
	}
	return ""
}

// runSuite is the <testsuite> of the run's test case: passing when failure
// is "". props are the run's, as its JUnit file states them, so that the
// case is read as part of the same run; start is when the run began.
func runSuite(failure string, props model.Run, start time.Time) []byte {
	var b bytes.Buffer
	attr := func(s string) string {
		var e bytes.Buffer
		_ = xml.EscapeText(&e, []byte(s)) // writes to memory: no error
		return e.String()
	}
	fails := 0
	if failure != "" {
		fails = 1
	}
	fmt.Fprintf(&b, `<testsuite name="%s" tests="1" failures="%d" timestamp="%s">`, RunClass, fails, start.UTC().Format(time.RFC3339Nano))
	if props.CommitSHA != "" || props.RunID != "" || props.Attempt != 0 {
		b.WriteString("<properties>")
		if props.CommitSHA != "" {
			fmt.Fprintf(&b, `<property name="commit_sha" value="%s"/>`, attr(props.CommitSHA))
		}
		if props.RunID != "" {
			fmt.Fprintf(&b, `<property name="run_id" value="%s"/>`, attr(props.RunID))
		}
		if props.Attempt != 0 {
			fmt.Fprintf(&b, `<property name="run_attempt" value="%d"/>`, props.Attempt)
		}
		b.WriteString("</properties>")
	}
	fmt.Fprintf(&b, `<testcase classname="%s" name="%s"`, RunClass, RunName)
	if failure == "" {
		b.WriteString("/>")
	} else {
		fmt.Fprintf(&b, `><failure message="%s">%s</failure></testcase>`, attr(failure), attr(failure))
	}
	b.WriteString("</testsuite>\n")
	return b.Bytes()
}

// standalone is a run's file that holds only the run's test case.
func standalone(suite []byte) []byte {
	return append([]byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"), suite...)
}

// withSuite puts suite inside the root element of the JUnit document doc,
// as its last child, so that it shares the root's properties and is read
// as part of the same run. doc has been read as JUnit, so its root is a
// <testsuites> or a <testsuite>; only comments, processing instructions
// and white space may follow it. A UTF-16 document stays UTF-16; other
// encodings the reader takes agree with ASCII, which suite is.
func withSuite(doc, suite []byte) ([]byte, error) {
	var enc *unicode.Endianness
	switch {
	case bytes.HasPrefix(doc, []byte{0xFF, 0xFE}):
		le := unicode.LittleEndian
		enc = &le
	case bytes.HasPrefix(doc, []byte{0xFE, 0xFF}):
		be := unicode.BigEndian
		enc = &be
	}
	if enc != nil {
		u16 := unicode.UTF16(*enc, unicode.ExpectBOM)
		text, err := u16.NewDecoder().Bytes(doc)
		if err != nil {
			return nil, fmt.Errorf("UTF-16: %w", err)
		}
		out, err := insertSuite(text, suite)
		if err != nil {
			return nil, err
		}
		return unicode.UTF16(*enc, unicode.UseBOM).NewEncoder().Bytes(out)
	}
	return insertSuite(doc, suite)
}

func insertSuite(doc, suite []byte) ([]byte, error) {
	end := len(doc)
	for {
		t := bytes.TrimRight(doc[:end], " \t\r\n")
		var open string
		switch {
		case bytes.HasSuffix(t, []byte("-->")):
			open = "<!--"
		case bytes.HasSuffix(t, []byte("?>")):
			open = "<?"
		default:
			end = len(t)
		}
		if open == "" {
			break
		}
		i := bytes.LastIndex(t, []byte(open))
		if i < 0 {
			return nil, errors.New("no root element's end found")
		}
		end = i
	}
	// '<' may not stand in an attribute's value: the last one opens the
	// root's end tag, or the root itself when it is empty (<testsuite/>).
	i := bytes.LastIndexByte(doc[:end], '<')
	if i < 0 || end < 2 || doc[end-1] != '>' {
		return nil, errors.New("no root element's end found")
	}
	tag := doc[i:end]
	var out bytes.Buffer
	out.Grow(len(doc) + len(suite) + 16)
	switch {
	case bytes.HasPrefix(tag, []byte("</")):
		out.Write(doc[:i])
		out.Write(suite)
		out.Write(doc[i:])
	case bytes.HasSuffix(tag, []byte("/>")):
		name := tag[1:]
		if j := bytes.IndexAny(name, " \t\r\n/"); j >= 0 {
			name = name[:j]
		}
		out.Write(doc[:end-2])
		out.WriteString(">")
		out.Write(suite)
		out.WriteString("</")
		out.Write(name)
		out.WriteString(">")
		out.Write(doc[end:])
	default:
		return nil, errors.New("no root element's end found")
	}
	return out.Bytes(), nil
}

// readJUnit reads the command's JUnit file at path: missing is true when
// there is none.
func readJUnit(path string) (doc []byte, missing bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, false, err
	} else if fi.IsDir() {
		return nil, false, errors.New("a directory, not a file: the JUnit path names the one file the command writes; patterns and directories are not read")
	} else if !fi.Mode().IsRegular() {
		return nil, false, errors.New("not a regular file")
	} else if fi.Size() > maxJUnitBytes {
		return nil, false, fmt.Errorf("%d MiB, more than the %d MiB matrix reads of a run's file (it holds each in memory while it rewrites it): trim the captured output (system-out) the tool writes into it", fi.Size()>>20, maxJUnitBytes>>20)
	}
	doc, err = io.ReadAll(io.LimitReader(f, maxJUnitBytes+1))
	if err == nil && len(doc) > maxJUnitBytes {
		err = fmt.Errorf("grew past the %d MiB matrix reads of a run's file while it was read", maxJUnitBytes>>20)
	}
	return doc, false, err
}

// maxJUnitBytes bounds a run's JUnit file: matrix rewrites it in memory
// (about five times its size at the peak).
const maxJUnitBytes = 256 << 20

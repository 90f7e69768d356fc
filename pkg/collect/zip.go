package collect

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"

	"github.com/flakegate/flakegate/pkg/internal/defaults"
)

// Default caps on one artifact zip. Each is far above what a JUnit artifact
// holds; they exist so that a hostile archive (artifacts of fork PRs are
// untrusted) cannot exhaust memory or time.
const (
	DefaultMaxDownload = 512 << 20 // compressed bytes of one artifact, as downloaded
	DefaultMaxTotal    = 512 << 20 // decompressed bytes read from one artifact
	DefaultMaxEntry    = 256 << 20 // decompressed bytes of one entry
	DefaultMaxEntries  = 10_000    // entries in one artifact
)

// ZipLimits caps what is read from one artifact zip. The zero value of a
// field means its default.
type ZipLimits struct {
	// Download caps the compressed size of one artifact; default
	// DefaultMaxDownload. It is checked against the size GitHub lists
	// before any request, and again while downloading.
	Download int64
	// Total caps the decompressed bytes read from all the entries of one
	// artifact; default DefaultMaxTotal. It is counted while reading, never
	// taken from the archive's declared sizes.
	Total int64
	// Entry caps the decompressed size of one entry; default
	// DefaultMaxEntry. An entry that declares more is not opened; one that
	// inflates beyond what it declares is cut off and refused.
	Entry int64
	// Entries caps the number of entries, files and directories, in one
	// artifact; default DefaultMaxEntries.
	Entries int
}

func (l ZipLimits) withDefaults() ZipLimits {
	defaults.Positive(&l.Download, DefaultMaxDownload)
	defaults.Positive(&l.Total, DefaultMaxTotal)
	defaults.Positive(&l.Entry, DefaultMaxEntry)
	defaults.Positive(&l.Entries, DefaultMaxEntries)
	return l
}

// archive is one artifact zip, opened from memory or from its temporary
// file. Only the central directory and the entries read are read: an entry
// whose name is not a JUnit candidate is never touched. Entry names are
// labels only: no entry is ever extracted to disk, and a name is never
// joined to a path.
type archive struct {
	label string // "run 123 attempt 1 / junit-linux"
	name  string // the artifact's name, "junit-linux": its documents' leg
	zr    *zip.Reader
	lim   ZipLimits
	read  int64 // decompressed bytes read from the archive so far
}

// openArchive opens the size bytes of r as a zip. The error says why the
// whole artifact is left out: not a zip, or too many entries.
func openArchive(label string, r io.ReaderAt, size int64, lim ZipLimits) (*archive, error) {
	// archive/zip allocates every central directory record before it
	// returns, so refuse an archive that declares too many first.
	if n, ok := declaredEntries(r, size); ok && n > uint64(lim.Entries) {
		return nil, fmt.Errorf("archive declares %d entries, over the cap of %d entries", n, lim.Entries)
	}
	zr, err := zip.NewReader(r, size)
	// ErrInsecurePath (GODEBUG zipinsecurepath=0) comes with a usable
	// reader; such names are refused one by one below.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("not a zip archive (%v)", err)
	}
	if len(zr.File) > lim.Entries {
		return nil, fmt.Errorf("archive has %d entries, over the cap of %d entries", len(zr.File), lim.Entries)
	}
	return &archive{label: label, zr: zr, lim: lim}, nil
}

// declaredEntries reads the entry count from the end-of-central-directory
// record (or its zip64 form) of the size bytes of r, reading only the tail.
// ok is false when there is none; archive/zip then says what is wrong.
func declaredEntries(r io.ReaderAt, size int64) (n uint64, ok bool) {
	const (
		eocdLen      = 22
		maxComment   = 0xFFFF
		eocdSig      = 0x06054b50
		locatorSig   = 0x07064b50
		locatorLen   = 20
		eocd64Sig    = 0x06064b50
		eocd64MinLen = 56
	)
	if size < eocdLen {
		return 0, false
	}
	// The record is in the last eocdLen+maxComment bytes; the zip64
	// locator just before it.
	start := max(0, size-eocdLen-maxComment-locatorLen)
	b := make([]byte, size-start)
	if _, err := r.ReadAt(b, start); err != nil && err != io.EOF {
		return 0, false
	}
	le := binary.LittleEndian
	for i := len(b) - eocdLen; i >= 0 && i >= len(b)-eocdLen-maxComment; i-- {
		if le.Uint32(b[i:]) != eocdSig || i+eocdLen+int(le.Uint16(b[i+20:])) > len(b) {
			continue
		}
		n = uint64(le.Uint16(b[i+10:]))
		if n == 0xFFFF && i >= locatorLen && le.Uint32(b[i-locatorLen:]) == locatorSig {
			var rec [eocd64MinLen]byte
			if off := le.Uint64(b[i-locatorLen+8:]); size >= eocd64MinLen && off <= uint64(size-eocd64MinLen) {
				if _, err := r.ReadAt(rec[:], int64(off)); err == nil && le.Uint32(rec[:]) == eocd64Sig {
					n = le.Uint64(rec[32:])
				}
			}
		}
		return n, true
	}
	return 0, false
}

// doc is a JUnit entry to read.
type doc struct {
	f     *zip.File
	label string
}

// scan sorts the entries: the JUnit documents to read, the entries left out
// with the reason, and how many were ignored (directories and files whose
// names do not end in .xml). Names are compared case-insensitively.
func (a *archive) scan() (docs []doc, skipped []history.Skipped, ignored int) {
	seen := map[string]int{}
	xml, zips := 0, 0
	for _, f := range a.zr.File {
		name := f.Name
		if strings.HasSuffix(name, "/") || !strings.EqualFold(extOf(name), ".xml") {
			if strings.EqualFold(extOf(name), ".zip") {
				zips++ // Playwright's traces, most often: not opened
			}
			ignored++
			continue
		}
		xml++
		label := a.label + " / " + labelName(name)
		// A zip may hold one name twice; keep labels unique.
		if seen[name]++; seen[name] > 1 {
			label += " (#" + strconv.Itoa(seen[name]) + ")"
		}
		if why := unsafeName(name); why != "" {
			skipped = append(skipped, history.Skipped{Path: label, Error: "entry name is " + why + ": not read"})
			continue
		}
		if f.UncompressedSize64 > uint64(a.lim.Entry) {
			skipped = append(skipped, history.Skipped{Path: label,
				Error: fmt.Sprintf("entry declares %d bytes, over the cap of %d bytes per entry: not read", f.UncompressedSize64, a.lim.Entry)})
			continue
		}
		docs = append(docs, doc{f: f, label: label})
	}
	docs, skipped = a.dropCopies(docs, skipped)
	if xml == 0 {
		why := fmt.Sprintf("no JUnit XML in artifact (%d entries, none ending in .xml)", len(a.zr.File))
		if zips > 0 {
			why += fmt.Sprintf("; %d zip file(s) in it are not opened: upload the XML files themselves", zips)
		}
		skipped = append(skipped, history.Skipped{Path: a.label, Error: why})
	}
	return docs, skipped, ignored
}

// dropCopies leaves out of one artifact's docs the known copies of
// results another of them holds (findCopies), listing each in skipped with
// the entry read instead. An entry whose kind is needed is opened twice:
// here for its first peekLen bytes (counted in what the artifact's cap
// allows), and again if it is read; the archive is spooled, so the second
// reading costs only the inflating of the prefix again.
func (a *archive) dropCopies(docs []doc, skipped []history.Skipped) ([]doc, []history.Skipped) {
	paths := make([]string, len(docs))
	for i, d := range docs {
		paths[i] = strings.ReplaceAll(d.f.Name, `\`, "/")
	}
	drops := findCopies(paths, func(idx []int) []copyKind {
		kinds := make([]copyKind, len(idx))
		for k, i := range idx {
			f := docs[i].f
			kinds[k] = peekKind(func() (io.ReadCloser, error) {
				rc, err := f.Open()
				if err != nil {
					return nil, err
				}
				return &peekReader{rc: rc, a: a}, nil
			})
		}
		return kinds
	})
	return leaveOut(docs, drops, func(d doc) string { return d.label }, skipped)
}

// peekReader reads the start of an entry, counting it in the artifact's
// decompressed bytes.
type peekReader struct {
	rc io.ReadCloser
	a  *archive
}

func (p *peekReader) Read(b []byte) (int, error) {
	n, err := p.rc.Read(b)
	p.a.read += int64(n)
	return n, err
}

func (p *peekReader) Close() error { return p.rc.Close() }

// entryDir is the directory of an entry's name, "/reports" for
// "reports/TEST-a.xml", "" at the top: with the artifact's name before it,
// the leg of the entry's run it is in (history.Source.Leg).
func entryDir(name string) string {
	name = legPath(strings.ReplaceAll(name, `\`, "/"))
	i := strings.LastIndexByte(name, '/')
	if i <= 0 {
		return ""
	}
	return "/" + labelName(strings.Trim(name[:i], "/"))
}

// artifactLeg is the leg an artifact's documents count in: its name,
// without the run attempt a workflow put in it. "Re-run failed jobs"
// re-runs a job in the same workflow run, and upload-artifact refuses a
// name the run already has, so workflows name their artifacts
// junit-shard-2-attempt-${{ github.run_attempt }}: the re-run's artifact
// holds the same tests as the first attempt's, and the two are attempts of
// one leg. As legs of their own, each test of the re-run job became two
// tests, one per attempt, and a test that failed and then passed on the
// re-run was no retry. The attempt is "attempt" and its number at the end
// of the name (attempt-2, attempt_2, attempt2); a plain number
// (junit-shard-2) is left alone.
func artifactLeg(name string) string {
	if m := attemptSuffix().FindStringIndex(name); m != nil && m[0] > 0 {
		return name[:m[0]]
	}
	return name
}

// attemptSuffix is a run attempt at the end of an artifact's name:
// -attempt-2, _attempt_2, -attempt2 (not "attempts", a word of its own, as
// in junit-max-attempts-3).
var attemptSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[-_.]attempt[-_]?[0-9]+$`)
})

// legPath is the slash-separated path of a file as its leg sees it: the
// path itself, but for a Bazel attempt. With --flaky_test_attempts, Bazel
// keeps each failed attempt of a test target as
// test_attempts/attempt_N.xml beside the last attempt's test.xml. Those are
// earlier attempts of the same tests in the same run, so they count in the
// leg of test.xml's directory: a test failing in attempt 1 and passing in
// test.xml is retried there, and so flaky. As a leg of their own, every
// test in them became a second test, failing whenever seen, and the flaky
// one was never found.
func legPath(p string) string {
	dir, base := path.Split(p)
	if !strings.HasSuffix(dir, "test_attempts/") || !isAttemptName(base) {
		return p
	}
	if up := strings.TrimSuffix(dir, "test_attempts/"); up == "" || strings.HasSuffix(up, "/") {
		return up + base
	}
	return p
}

// isAttemptName reports whether base is Bazel's name for an attempt's
// JUnit file, attempt_N.xml.
func isAttemptName(base string) bool {
	n, ok := strings.CutPrefix(base, "attempt_")
	n, ok2 := strings.CutSuffix(n, ".xml")
	if !ok || !ok2 || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// extOf is the extension of a slash- or backslash-separated name.
func extOf(name string) string {
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		return base[i:]
	}
	return ""
}

// unsafeName says why an entry name would escape a directory were it ever
// used as a path ("" when it would not): absolute, a drive or UNC prefix,
// a ".." element (with / or \ as the separator), or a NUL byte. flakegate
// never uses names as paths; refusing such entries keeps crafted archives
// out of the history and shows them in the report.
func unsafeName(name string) string {
	n := strings.ReplaceAll(name, `\`, "/")
	switch {
	case strings.IndexByte(name, 0) >= 0:
		return "not a file name (NUL byte)"
	case strings.HasPrefix(n, "/"):
		return "an absolute path"
	case len(n) >= 2 && n[1] == ':' && ('a' <= n[0]|0x20 && n[0]|0x20 <= 'z'):
		return "an absolute path (drive letter)"
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return "outside the archive (..)"
		}
	}
	return ""
}

// maxLabelName bounds an entry name inside a label.
const maxLabelName = 300

// labelName makes an untrusted entry name printable inside a label: it is
// cut to maxLabelName bytes, and quoted when it holds control or invalid
// characters.
func labelName(s string) string {
	if len(s) > maxLabelName {
		cut := maxLabelName
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// spent reports whether the per-artifact cap is used up, so that the
// remaining documents are left out without being opened.
func (a *archive) spent() bool { return a.read >= a.lim.Total }

// source returns the history source for one document. The reader it opens
// decompresses through capReader; after the builder has read it, the
// returned func reports why reading stopped short (nil when it did not).
func (a *archive) source(d doc, run *model.Run) (history.Source, func() error) {
	var cr *capReader
	src := history.Source{Name: d.label, Leg: artifactLeg(a.name) + entryDir(d.f.Name), Run: run, Open: func() (io.ReadCloser, error) {
		rc, err := d.f.Open()
		if err != nil {
			return nil, fmt.Errorf("corrupt entry: %w", err)
		}
		cr = &capReader{rc: rc, a: a, declared: d.f.UncompressedSize64}
		return cr, nil
	}}
	return src, func() error {
		if cr == nil {
			return nil
		}
		return cr.err
	}
}

// capReader reads one entry, counting what it inflates to. It never trusts
// the declared sizes: it stops at the per-entry and per-artifact caps, one
// byte past them at most, and names the cap.
type capReader struct {
	rc       io.ReadCloser
	a        *archive
	n        int64 // bytes of this entry read so far
	declared uint64
	err      error // why reading stopped short
}

// Size is the entry's declared size, within the per-entry cap: what the
// reader sizes its tables by, not what it trusts.
func (c *capReader) Size() int64 { return int64(min(c.declared, uint64(max(c.a.lim.Entry, 0)))) }

func (c *capReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.rc == nil {
		return 0, errors.New("read after close")
	}
	room := min(c.a.lim.Entry-c.n, c.a.lim.Total-c.a.read) + 1
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.rc.Read(p)
	c.n += int64(n)
	c.a.read += int64(n)
	switch {
	case c.n > c.a.lim.Entry:
		c.err = fmt.Errorf("entry inflates beyond the cap of %d bytes per entry (declared %d): not read", c.a.lim.Entry, c.declared)
	case c.a.read > c.a.lim.Total:
		c.err = fmt.Errorf("entry inflates the artifact beyond the cap of %d bytes per artifact: not read", c.a.lim.Total)
	case err == nil, err == io.EOF:
		return n, err
	case errors.Is(err, zip.ErrFormat):
		// archive/zip says ErrFormat when an entry inflates past the size
		// its header declares.
		c.err = fmt.Errorf("entry inflates beyond its declared size of %d bytes (zip bomb?): not read", c.declared)
	case errors.Is(err, zip.ErrChecksum):
		c.err = fmt.Errorf("corrupt entry: CRC-32 mismatch")
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.err = fmt.Errorf("corrupt entry: shorter than its declared size of %d bytes", c.declared)
	default:
		c.err = fmt.Errorf("corrupt entry: %v", err)
	}
	return n, c.err
}

// Close closes the entry and lets go of the archive: the JUnit reader keeps
// its last source until the next document, and the zip behind it must not
// outlive its parse.
func (c *capReader) Close() error {
	if c.rc == nil {
		return nil
	}
	err := c.rc.Close()
	c.rc, c.a = nil, nil
	return err
}

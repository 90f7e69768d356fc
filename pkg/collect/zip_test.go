package collect

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/history"
)

// noise is n incompressible bytes, the same every time.
func noise(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

// rawEntry is an entry written with CreateRaw, so that its header may lie.
type rawEntry struct {
	name     string
	plain    []byte // what the entry inflates to
	declared uint64 // UncompressedSize64 in the headers
}

// writeRaw writes DEFLATE entries whose headers declare e.declared bytes,
// whatever they inflate to.
func writeRaw(entries []rawEntry) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		var comp bytes.Buffer
		fw, err := flate.NewWriter(&comp, flate.BestCompression)
		if err != nil {
			return nil, err
		}
		fw.Write(e.plain)
		if err := fw.Close(); err != nil {
			return nil, err
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(e.plain),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: e.declared})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(comp.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bombZip is a zip whose one entry declares declared bytes and inflates to
// inflated bytes of a highly compressible payload.
func bombZip(name string, inflated int, declared uint64) ([]byte, error) {
	return writeRaw([]rawEntry{{name: name, plain: bytes.Repeat([]byte("<testsuite>"), inflated/11), declared: declared}})
}

// readAll opens every document of an archive and reads it to the end, as
// the history builder would, returning why each stopped short.
// openZip opens a zip held in memory.
func openZip(label string, data []byte, lim ZipLimits) (*archive, error) {
	return openArchive(label, bytes.NewReader(data), int64(len(data)), lim)
}

func readAll(t *testing.T, a *archive, docs []doc) []string {
	t.Helper()
	var out []string
	for _, d := range docs {
		src, stopped := a.source(d, nil)
		rc, err := src.Open()
		if err != nil {
			out = append(out, "open: "+err.Error())
			continue
		}
		_, rerr := io.Copy(io.Discard, rc)
		rc.Close()
		if err := stopped(); err != nil {
			if rerr == nil {
				t.Errorf("%s: reader stopped (%v) without an error", d.label, err)
			}
			out = append(out, err.Error())
		} else {
			out = append(out, "")
		}
	}
	return out
}

func TestZipBomb(t *testing.T) {
	const declared = 100
	data, err := bombZip("bomb.xml", 8<<20, declared)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 {
		t.Fatalf("bomb is %d bytes compressed; want a small one", len(data))
	}
	a, err := openZip("art", data, ZipLimits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	docs, skipped, _ := a.scan()
	if len(docs) != 1 || len(skipped) != 0 {
		t.Fatalf("docs %v skipped %v: the declared size is under the cap", docs, skipped)
	}
	got := readAll(t, a, docs)
	if want := []string{"entry inflates beyond its declared size of 100 bytes (zip bomb?): not read"}; !cmp.Equal(want, got) {
		t.Errorf("got %q, want %q", got, want)
	}
	if a.read > declared {
		t.Errorf("inflated %d bytes of a bomb declaring %d", a.read, declared)
	}
	// The size a reader tells (which the builder sizes its tables by) is
	// the declared one, and never past the per-entry cap.
	for _, c := range []struct{ declared, entry, want int64 }{{100, 1 << 20, 100}, {1 << 40, 1 << 20, 1 << 20}} {
		cr := &capReader{a: &archive{lim: ZipLimits{Entry: c.entry}}, declared: uint64(c.declared)}
		if got := cr.Size(); got != c.want {
			t.Errorf("declared %d, entry cap %d: Size %d, want %d", c.declared, c.entry, got, c.want)
		}
	}
}

// TestZipCaps drives the caps of capReader directly, below archive/zip's
// own check of declared sizes: they hold even if the declared sizes are
// not checked.
func TestZipCaps(t *testing.T) {
	files := map[string][]byte{"a.xml": bytes.Repeat([]byte("a"), 3000), "b.xml": bytes.Repeat([]byte("b"), 3000), "c.xml": []byte("c")}
	data, err := zipOf(files)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		lim  ZipLimits
		want []string
	}{
		{"under", ZipLimits{Entry: 3000, Total: 6001}, []string{"", "", ""}},
		{"entry", ZipLimits{Entry: 2000, Total: 1 << 20}, []string{
			"entry inflates beyond the cap of 2000 bytes per entry (declared 3000): not read",
			"entry inflates beyond the cap of 2000 bytes per entry (declared 3000): not read", ""}},
		{"total", ZipLimits{Entry: 1 << 20, Total: 4000}, []string{"",
			"entry inflates the artifact beyond the cap of 4000 bytes per artifact: not read",
			"entry inflates the artifact beyond the cap of 4000 bytes per artifact: not read"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := openZip("art", data, ZipLimits{}.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			docs, _, _ := a.scan()
			a.lim.Entry, a.lim.Total = tc.lim.Entry, tc.lim.Total // as if the headers had lied
			if diff := cmp.Diff(tc.want, readAll(t, a, docs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if limit := min(tc.lim.Total, int64(len(docs))*(tc.lim.Entry+1)); a.read > limit+1 {
				t.Errorf("inflated %d bytes, caps allow %d", a.read, limit)
			}
		})
	}
}

func zipOf(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"a.xml", "b.xml", "c.xml"} {
		if files[name] == nil {
			continue
		}
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		w.Write(files[name])
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func TestZipCorruptEntry(t *testing.T) {
	plain := []byte(`<testsuite name="s"><testcase name="t"/></testsuite>`)
	data, err := writeRaw([]rawEntry{{name: "short.xml", plain: plain, declared: uint64(len(plain)) + 10}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := openZip("art", data, ZipLimits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	docs, _, _ := a.scan()
	want := []string{fmt.Sprintf("corrupt entry: shorter than its declared size of %d bytes", len(plain)+10)}
	if diff := cmp.Diff(want, readAll(t, a, docs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A flipped byte in the compressed data: DEFLATE or CRC-32 says so.
	good, _ := writeRaw([]rawEntry{{name: "x.xml", plain: bytes.Repeat(plain, 50), declared: uint64(len(plain) * 50)}})
	bad := bytes.Clone(good)
	bad[len("PK\x03\x04")+26+len("x.xml")+10] ^= 0xff
	a, err = openZip("art", bad, ZipLimits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	docs, _, _ = a.scan()
	if got := readAll(t, a, docs); !strings.HasPrefix(got[0], "corrupt entry: ") {
		t.Errorf("flipped byte: %q", got)
	}
}

func TestZipEntries(t *testing.T) {
	many := func(n int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i := range n {
			zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("d/%d.txt", i), Method: zip.Store})
		}
		zw.Close()
		return buf.Bytes()
	}
	lim := ZipLimits{Entries: 10}.withDefaults()
	if _, err := openZip("art", many(10), lim); err != nil {
		t.Errorf("10 entries: %v", err)
	}
	if _, err := openZip("art", many(11), lim); err == nil || err.Error() != "archive declares 11 entries, over the cap of 10 entries" {
		t.Errorf("11 entries: %v", err)
	}

	// Over 65,535 entries the count is in the zip64 record.
	lying := many(65_537)
	if n, ok := declaredEntries(bytes.NewReader(lying), int64(len(lying))); !ok || n != 65_537 {
		t.Errorf("zip64: declared %d, %v", n, ok)
	}
	// A zip64 record may understate the count: archive/zip checks it only
	// modulo 65,536. The count of entries read decides.
	eocd := bytes.LastIndex(lying, []byte("PK\x05\x06"))
	off := binary.LittleEndian.Uint64(lying[eocd-20+8:])
	binary.LittleEndian.PutUint64(lying[off+24:], 1)
	binary.LittleEndian.PutUint64(lying[off+32:], 1)
	if n, _ := declaredEntries(bytes.NewReader(lying), int64(len(lying))); n != 1 {
		t.Fatalf("lying archive declares %d", n)
	}
	if _, err := openZip("art", lying, ZipLimits{Entries: 100}.withDefaults()); err == nil || err.Error() != "archive has 65537 entries, over the cap of 100 entries" {
		t.Errorf("understated count: %v", err)
	}

	for _, b := range [][]byte{nil, []byte("PK"), []byte("PK\x05\x06 but not a zip, just text long enough")} {
		if _, err := openZip("art", b, lim); err == nil || !strings.HasPrefix(err.Error(), "not a zip archive") {
			t.Errorf("%q: %v", b, err)
		}
	}
}

func TestZipScan(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"TEST-a.xml", "sub/", "sub/TEST-b.XML", "log.txt", "xml", "a.xml.gz", "../up.xml", "/abs.xml",
		`sub\..\..\w.xml`, "c:/d.xml", "nul\x00.xml", "dup.xml", "dup.xml", "ctl\x1b[31m.xml", "sub/../inside.xml"} {
		zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	}
	zw.Close()
	a, err := openZip("art", buf.Bytes(), ZipLimits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	docs, skipped, ignored := a.scan()
	var labels []string
	for _, d := range docs {
		labels = append(labels, d.label)
	}
	wantDocs := []string{"art / TEST-a.xml", "art / sub/TEST-b.XML", "art / dup.xml", "art / dup.xml (#2)", `art / "ctl\x1b[31m.xml"`}
	if diff := cmp.Diff(wantDocs, labels); diff != "" {
		t.Errorf("docs (-want +got):\n%s", diff)
	}
	wantSkipped := []history.Skipped{
		{Path: "art / ../up.xml", Error: "entry name is outside the archive (..): not read"},
		{Path: "art / /abs.xml", Error: "entry name is an absolute path: not read"},
		{Path: `art / sub\..\..\w.xml`, Error: "entry name is outside the archive (..): not read"},
		{Path: "art / c:/d.xml", Error: "entry name is an absolute path (drive letter): not read"},
		{Path: `art / "nul\x00.xml"`, Error: "entry name is not a file name (NUL byte): not read"},
		// Harmless as a path, but crafted: ".." is refused wherever it is.
		{Path: "art / sub/../inside.xml", Error: "entry name is outside the archive (..): not read"},
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if ignored != 4 {
		t.Errorf("ignored %d entries, want 4: sub/, log.txt, xml, a.xml.gz", ignored)
	}
}

// TestZipOnlyZipsSaid: an artifact whose results were zipped twice holds
// no XML but a zip: the reason it was left out says so. (A zip beside
// XML files, Playwright's traces, is ignored as any other file.)
func TestZipOnlyZipsSaid(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.CreateHeader(&zip.FileHeader{Name: "results.zip", Method: zip.Store})
	zw.Close()
	a, err := openZip("art", buf.Bytes(), ZipLimits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	_, skipped, _ := a.scan()
	want := []history.Skipped{{Path: "art", Error: "no JUnit XML in artifact (1 entries, none ending in .xml); 1 zip file(s) in it are not opened: upload the XML files themselves"}}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

func TestLabelName(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	tests := map[string]string{
		"reports/TEST-x.xml": "reports/TEST-x.xml",
		"a b.xml":            "a b.xml",
		"bad\nname.xml":      `"bad\nname.xml"`,
		"\xff.xml":           `"\xff.xml"`,
		long:                 strings.Repeat("é", 150) + "…",
	}
	for in, want := range tests {
		if got := labelName(in); got != want {
			t.Errorf("labelName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArtifactLeg: the run attempt in an artifact's name is not part of
// its leg (see artifactLeg).
func TestArtifactLeg(t *testing.T) {
	for in, want := range map[string]string{
		"junit-shard-2-attempt-1": "junit-shard-2",
		"junit-shard-2-attempt-2": "junit-shard-2",
		"test-results_attempt_2":  "test-results",
		"test-results-Attempt2":   "test-results",
		"junit-shard-2":           "junit-shard-2",
		"junit-reattempt-2":       "junit-reattempt-2",
		"attempt-2":               "attempt-2",
		"junit-windows":           "junit-windows",
		// Real legs, whose names hold the word otherwise.
		"junit-max-attempts-1":   "junit-max-attempts-1",
		"login-attempts-5-junit": "login-attempts-5-junit",
		"junit-attempt-2-ubuntu": "junit-attempt-2-ubuntu",
	} {
		if got := artifactLeg(in); got != want {
			t.Errorf("artifactLeg(%q) = %q, want %q", in, got, want)
		}
	}
}

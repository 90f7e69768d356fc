package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flakegate/flakegate/pkg/synth"
)

// BenchmarkAnalyze runs `flakegate analyze --format json` end to end on the
// README's benchmark history: 180 files, 44 MB, 360,000 results.
//
//	go test -run '^$' -bench 'Analyze|RawScan' -benchtime 20x ./pkg/cli
func BenchmarkAnalyze(b *testing.B) {
	paths, size := benchFiles(b)
	args := append([]string{"analyze", "--format", "json"}, paths...)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		code := Main(context.Background(), Env{Args: args, Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
}

// BenchmarkRawScan is the floor: read every file and count "<testcase"
// with bytes.Count, on all cores, as `grep -c '<testcase'` does on one.
func BenchmarkRawScan(b *testing.B) {
	paths, size := benchFiles(b)
	b.SetBytes(size)
	for b.Loop() {
		if n := rawScan(b, paths); n != 360056 {
			b.Fatalf("counted %d testcases", n)
		}
	}
}

// rawScan reads every file and counts "<testcase" in it, on every core.
func rawScan(b testing.TB, paths []string) int64 { return rawScanBuf(b, paths, 256<<10) }

func rawScanBuf(b testing.TB, paths []string, bufSize int) int64 {
	pat := []byte("<testcase")
	var n, next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, bufSize)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(paths) {
					return
				}
				f, err := os.Open(paths[i])
				if err != nil {
					b.Error(err)
					return
				}
				// Each read lands after the last len(pat)-1 bytes of the
				// one before, so a match across two reads is counted once
				// and no byte is copied twice.
				c, keep := 0, 0
				for {
					k, err := f.Read(buf[keep:])
					c += bytes.Count(buf[:keep+k], pat)
					if err != nil {
						break
					}
					end := keep + k
					keep = min(end, len(pat)-1)
					copy(buf, buf[end-keep:end])
				}
				f.Close()
				n.Add(int64(c))
			}
		}()
	}
	wg.Wait()
	return n.Load()
}

func benchFiles(b *testing.B) ([]string, int64) {
	b.Helper()
	paths, err := synth.BenchFiles()
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	return paths, size
}

// TestRawScanCountsAcrossReads checks the floor's count when matches
// straddle reads, down to one byte per read past the carried tail.
func TestRawScanCountsAcrossReads(t *testing.T) {
	doc := bytes.Repeat([]byte("<testcase name=\"x\"/><testcase/>\n<testcas<testcase"), 7)
	p := filepath.Join(t.TempDir(), "a.xml")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	for size := len("<testcase"); size < 80; size++ {
		if n := rawScanBuf(t, []string{p, p}, size); n != 2*21 {
			t.Errorf("buffer of %d: counted %d, want 42", size, n)
		}
	}
}

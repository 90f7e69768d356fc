package cli

import (
	"bytes"
	"context"
	"io"
	"os"
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
func rawScan(b *testing.B, paths []string) int64 {
	pat := []byte("<testcase")
	var n, next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256<<10)
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
				var c int
				var carry []byte
				for {
					k, err := f.Read(buf)
					chunk := append(carry, buf[:k]...)
					c += bytes.Count(chunk, pat)
					if len(chunk) >= len(pat) {
						carry = append(carry[:0], chunk[len(chunk)-len(pat)+1:]...)
					}
					if err != nil {
						break
					}
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

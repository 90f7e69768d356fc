//go:build unix

package cli

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/fixtures/bench/layouts"
	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/internal/par"
)

// BenchmarkLayouts runs `flakegate analyze --format json DIR` end to end,
// the raw-scan floor (read every file and count "<testcase" with
// bytes.Count on every core) and analyze's own reading alone (io), on the
// README's benchmark history in each
// layout of fixtures/bench/layouts, and on a 16× history (960 commits,
// 2,880 files, 704 MB). Besides ns/op it reports the process's CPU time
// per operation, which a busy machine disturbs less than wall time.
//
//	go test -run '^$' -bench Layouts -benchtime 5x -count 3 ./pkg/cli
//	go test -run '^$' -bench 'Layouts/16x' -benchtime 2x ./pkg/cli
func BenchmarkLayouts(b *testing.B) {
	for _, c := range []struct {
		layout layouts.Layout
		scale  int
	}{{layouts.Run, 1}, {layouts.Jest, 1}, {layouts.Mocha, 1}, {layouts.Nextest, 1}, {layouts.Class, 1}, {layouts.Small, 1}, {layouts.Suites, 1}, {layouts.Workers, 1}, {layouts.Run, 16}} {
		name := string(c.layout)
		if c.scale > 1 {
			name = "16x"
		}
		b.Run(name, func(b *testing.B) {
			dir, err := layouts.Dir(c.layout, c.scale)
			if err != nil {
				b.Fatal(err)
			}
			paths, err := layouts.Files(dir)
			if err != nil {
				b.Fatal(err)
			}
			size := int64(0)
			for _, p := range paths {
				fi, err := os.Stat(p)
				if err != nil {
					b.Fatal(err)
				}
				size += fi.Size()
			}
			want := int64(360056 * c.scale) // an approximation at 16×: checked below
			b.Run("floor", func(b *testing.B) {
				b.SetBytes(size)
				runtime.GC() // the last benchmark's garbage is not this one's
				cpu := cpuTime()
				for b.Loop() {
					n := rawScan(b, paths)
					if c.scale == 1 && n != want {
						b.Fatalf("counted %d testcases", n)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
			})
			// io reads every file the way analyze does (collect's walk
			// done once, then its open, fstat, read and close on every
			// core) and parses nothing: what a layout costs before any
			// parsing.
			b.Run("io", func(b *testing.B) {
				srcs, _, err := collect.Local([]string{dir})
				if err != nil || len(srcs) != len(paths) {
					b.Fatalf("%d sources, %v", len(srcs), err)
				}
				b.SetBytes(size)
				bufs := make([][]byte, runtime.GOMAXPROCS(0))
				runtime.GC()
				cpu := cpuTime()
				for b.Loop() {
					var n atomic.Int64
					par.Each(len(srcs), len(bufs), func(w, k int) {
						rc, err := srcs[k].Open()
						if err != nil {
							b.Error(err)
							return
						}
						defer rc.Close()
						if bufs[w] == nil {
							bufs[w] = make([]byte, 256<<10)
						}
						for {
							m, err := rc.Read(bufs[w])
							n.Add(int64(m))
							if err != nil {
								break
							}
						}
					})
					if n.Load() != size {
						b.Fatalf("read %d bytes of %d", n.Load(), size)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
			})
			b.Run("analyze", func(b *testing.B) {
				b.SetBytes(size)
				args := []string{"analyze", "--format", "json", dir}
				runtime.GC()
				cpu := cpuTime()
				for b.Loop() {
					// The report is counted, as a terminal or /dev/null
					// takes it, not kept in a growing buffer.
					var out countingWriter
					code := Main(context.Background(), Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &out, Stderr: io.Discard})
					if code != 0 || out.n < 1000 {
						b.Fatalf("exit %d, %d bytes", code, out.n)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
			})
		})
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingWriter takes what is written and keeps only its length.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

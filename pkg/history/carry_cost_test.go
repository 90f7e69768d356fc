package history

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/model"
)

// denseHistory is tests × runs with a cell in every place, as a weekly
// report's carried history is: one run in fifty fails a test, with one of
// three signatures. Run ids, commits and test ids are as long as real ones.
func denseHistory(tests, runs int) *History {
	h := &History{Runs: make([]Run, runs)}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range h.Runs {
		h.Runs[r] = Run{Run: model.Run{CommitSHA: fmt.Sprintf("%040x", r*7919), RunID: strconv.Itoa(14_000_000_000 + r), Attempt: 1,
			Time: start.Add(time.Duration(r) * 50 * time.Minute), Workflow: "CI", Branch: "main", Event: "push"},
			WorkflowFile: "ci.yml", WorkflowID: 81234567}
	}
	for i := range tests {
		t := &Test{ID: fmt.Sprintf("com.example.module%d.SomeServiceTest::test_case_number_%d", i/50, i), Cells: make([]Cell, runs)}
		for r := range t.Cells {
			c := Cell{Run: int32(r), Pass: 1}
			if (r*31+i*17)%50 == 0 {
				c = Cell{Run: int32(r), Fail: 1, Sig: uint16(1 + (r+i)%3)}
			}
			t.Cells[r] = c
		}
		for s := range 3 {
			t.Sigs = append(t.Sigs, Sig{Hash: fmt.Sprintf("sha256:%064x", i*3+s), Message: "expected 200, got 503 from upstream"})
		}
		for _, c := range t.Cells {
			if c.Sig > 0 {
				t.Sigs[c.Sig-1].Count++
			}
		}
		h.Tests = append(h.Tests, t)
	}
	h.finalize()
	return h
}

// heapCost runs f and returns the most heap that objects held while it
// ran, sampled every millisecond, and what they hold after it, each less
// what they held before, and the bytes f allocated in all.
func heapCost(f func()) (peak, live, allocated uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	base, alloc0 := s[0].Value.Uint64(), s[1].Value.Uint64()
	var top atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > top.Load() {
				top.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	metrics.Read(s)
	allocated = s[1].Value.Uint64() - alloc0
	runtime.GC()
	metrics.Read(s)
	return max(top.Load(), base) - base, max(s[0].Value.Uint64(), base) - base, allocated
}

// BenchmarkCarriedCost measures, per cell of a dense history of
// MaxCarriedCells cells, the JSON Encode writes before and after gzip, and
// the heap Decode allocates, holds at its peak, and holds in the history
// it returns. One shape has as many tests as a large repository and 1,000
// runs (run indices of three digits), the other fewer tests and more runs
// (four digits).
//
//	go test -run '^$' -bench CarriedCost -benchtime 2x ./pkg/history
func BenchmarkCarriedCost(b *testing.B) {
	for _, size := range []struct{ tests, runs int }{{5000, MaxCarriedCells / 5000}, {1000, MaxCarriedCells / 1000}} {
		b.Run(fmt.Sprintf("%dx%d", size.tests, size.runs), func(b *testing.B) {
			h := denseHistory(size.tests, size.runs)
			cells := float64(h.Cells())
			var buf bytes.Buffer
			if err := Encode(&buf, h); err != nil {
				b.Fatal(err)
			}
			h = nil
			jsonBytes, _ := io.Copy(io.Discard, newGunzip(b, buf.Bytes()))
			var peak, live, alloc uint64
			for b.Loop() {
				var got *History
				p, l, a := heapCost(func() {
					var err error
					if got, err = Decode(bytes.NewReader(buf.Bytes())); err != nil || got.Cells() != int(cells) {
						b.Fatal(err)
					}
				})
				runtime.KeepAlive(got)
				peak, live, alloc = max(peak, p), max(live, l), max(alloc, a)
			}
			b.ReportMetric(float64(jsonBytes)/cells, "json-B/cell")
			b.ReportMetric(float64(buf.Len())/cells, "gzip-B/cell")
			b.ReportMetric(float64(peak)/cells, "peak-heap-B/cell")
			b.ReportMetric(float64(live)/cells, "live-heap-B/cell")
			b.ReportMetric(float64(alloc)/cells, "alloc-B/cell")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cells, "ns/cell")
		})
	}
}

func newGunzip(tb testing.TB, b []byte) io.Reader {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	return zr
}

package history

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/flakegate/flakegate/fixtures/bench/layouts"
	"github.com/flakegate/flakegate/pkg/internal/par"
)

// benchPaths lists a benchmark history's files, writing it on first use.
func benchPaths(b *testing.B, l layouts.Layout, scale int) []string {
	b.Helper()
	dir, err := layouts.Dir(l, scale)
	if err != nil {
		b.Fatal(err)
	}
	paths, err := layouts.Files(dir)
	if err != nil {
		b.Fatal(err)
	}
	return paths
}

func benchSources(b *testing.B, l layouts.Layout, scale int) []Source {
	b.Helper()
	paths := benchPaths(b, l, scale)
	var size int64
	srcs := make([]Source, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
		srcs[i] = Source{Name: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }}
	}
	b.SetBytes(size)
	return srcs
}

// BenchmarkLoad loads the README's benchmark history (360,056 results) in
// each file layout of fixtures/bench/layouts: one file per run (180 files),
// one file per class per run as Surefire writes them (7,200 files), one
// file per 7 tests (51,480 files), and one file per run with a <testsuite>
// per 7 tests (51,480 suites).
//
//	go test -run '^$' -bench Load -benchtime 10x -count 3 ./pkg/history
func BenchmarkLoad(b *testing.B) {
	for _, l := range []layouts.Layout{layouts.Run, layouts.Jest, layouts.Mocha, layouts.Nextest, layouts.Class, layouts.Small, layouts.Suites, layouts.Workers} {
		b.Run(string(l), func(b *testing.B) {
			srcs := benchSources(b, l, 1)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				h, err := Load(context.Background(), srcs, Options{})
				if err != nil || len(h.Tests) != 2000 || len(h.Runs) != 180 || len(h.Skipped) != 0 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
		})
	}
}

// BenchmarkLoadLegs loads the benchmark history as a two-leg matrix would
// upload it: each run's file twice, as the legs "ubuntu" and "windows" of
// the run (720,112 results), the first run's Windows file with one more
// failure, so that the legs differ and every test is told apart by leg.
// Next to BenchmarkLoad/run, what splitting by leg costs beyond reading
// twice the results.
//
//	go test -run '^$' -bench Load -benchtime 10x -count 3 ./pkg/history
func BenchmarkLoadLegs(b *testing.B) {
	run := benchSources(b, layouts.Run, 1)
	var srcs []Source
	var size int64
	for _, leg := range []string{"ubuntu", "windows"} {
		for _, s := range run {
			fi, err := os.Stat(s.Name)
			if err != nil {
				b.Fatal(err)
			}
			size += fi.Size()
			s.Leg = leg
			srcs = append(srcs, s)
		}
	}
	first := &srcs[len(run)]
	doc, err := os.ReadFile(first.Name)
	if err != nil {
		b.Fatal(err)
	}
	at := bytes.Index(doc, []byte("<testcase "))
	end := at + bytes.Index(doc[at:], []byte("/>"))
	doc = slices.Concat(doc[:end], []byte(`><failure message="windows"/></testcase>`), doc[end+2:])
	first.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(doc)), nil }
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		h, err := Load(context.Background(), srcs, Options{})
		if err != nil || len(h.Tests) != 4000 || len(h.Runs) != 180 || len(h.Skipped) != 0 {
			b.Fatal(err, len(h.Tests), len(h.Runs))
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkFirstDocument reads one file of the run layout (2,000 tests)
// into a new builder: a worker's first document, whose tests and tags are
// all new. "sized" tells the builder the document's size, as a local file
// and a zip entry do, so it sizes its tables at once; "growing" does not.
// For scale, "later" reads the same file into a builder that has read it.
//
//	go test -run '^$' -bench FirstDocument -benchmem ./pkg/history
func BenchmarkFirstDocument(b *testing.B) {
	data, err := os.ReadFile(benchPaths(b, layouts.Run, 1)[0])
	if err != nil {
		b.Fatal(err)
	}
	open := func(size bool) Source {
		return Source{Name: "a.xml", Open: func() (io.ReadCloser, error) {
			if size {
				return sized{bytes.NewReader(data), int64(len(data))}, nil
			}
			return io.NopCloser(bytes.NewReader(data)), nil
		}}
	}
	for _, c := range []struct {
		name  string
		sized bool
	}{{"growing", false}, {"sized", true}} {
		b.Run(c.name, func(b *testing.B) {
			src := open(c.sized)
			for b.Loop() {
				bs := NewBuilders(1)
				if bs[0].Add(src); len(bs[0].tests) != 2000 {
					b.Fatalf("%d tests", len(bs[0].tests))
				}
			}
		})
	}
	b.Run("later", func(b *testing.B) {
		bs := NewBuilders(1)
		src := open(true)
		bs[0].Add(src)
		for b.Loop() {
			bs[0].Add(src)
		}
	})
}

// BenchmarkMerge joins the builders of the run layout read on two cores, as
// Load does: each test's cells gathered from both builders, put in order of
// run, and counted. The builders are read once.
//
//	go test -run '^$' -bench Merge -count 6 ./pkg/history
func BenchmarkMerge(b *testing.B) {
	srcs := benchSources(b, layouts.Run, 1)
	units := plan(srcs, 2)
	builders := newBuilders(2, defaultLimits)
	par.Each(len(units), 2, func(worker, k int) {
		for _, i := range units[k] {
			builders[worker].Add(srcs[i])
		}
	})
	b.SetBytes(0)
	cpu := cpuTime()
	for b.Loop() {
		if h := Merge(builders...); len(h.Tests) != 2000 || len(h.Runs) != 180 {
			b.Fatal(len(h.Tests), len(h.Runs))
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

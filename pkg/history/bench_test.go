package history

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/synth"
)

// BenchSpec is the benchmark history of the README: 60 commits × 3 runs ×
// 2,000 tests, one file per run, about 44 MB.
var BenchSpec = synth.Spec{Commits: 60, RunsPerCommit: 3, Tests: 2000, Seed: 42,
	Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
	Behaviors: map[int]synth.Behavior{
		7: {Kind: synth.Flaky, P: 0.2}, 70: {Kind: synth.Flaky, P: 0.05}, 700: {Kind: synth.Retried, P: 0.3},
		1200: {Kind: synth.Broken, From: 40}, 1500: {Kind: synth.Regression, From: 20, To: 22},
	}}

func benchDir(b *testing.B) []Source {
	dir := filepath.Join(os.TempDir(), "flakegate-bench-60x3x2000")
	paths, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(paths) != 180 {
		os.RemoveAll(dir)
		var err error
		if paths, err = BenchSpec.WriteDir(dir); err != nil {
			b.Fatal(err)
		}
	}
	var size int64
	srcs := make([]Source, len(paths))
	for i, p := range paths {
		fi, _ := os.Stat(p)
		size += fi.Size()
		srcs[i] = Source{Name: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }}
	}
	b.SetBytes(size)
	return srcs
}

func BenchmarkLoad(b *testing.B) {
	srcs := benchDir(b)
	b.ResetTimer()
	for b.Loop() {
		h, err := Load(context.Background(), srcs, Options{})
		if err != nil || len(h.Tests) != 2000 {
			b.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
}

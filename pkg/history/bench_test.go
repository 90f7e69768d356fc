package history

import (
	"context"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/flakegate/flakegate/pkg/synth"
)

func benchDir(b *testing.B) []Source {
	paths, err := synth.BenchFiles()
	if err != nil {
		b.Fatal(err)
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

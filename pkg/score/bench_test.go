package score

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/flakegate/flakegate/fixtures/bench/layouts"
	"github.com/flakegate/flakegate/pkg/history"
)

// BenchmarkScore scores the README's benchmark history (2,000 tests, 180
// runs, 360,056 results), read once: the scoring stage alone, without the
// parse, which moves less from run to run than analyze's whole time.
//
//	go test -run '^$' -bench Score -benchtime 50x -count 6 ./pkg/score
func BenchmarkScore(b *testing.B) {
	dir, err := layouts.Dir(layouts.Run, 1)
	if err != nil {
		b.Fatal(err)
	}
	paths, err := layouts.Files(dir)
	if err != nil {
		b.Fatal(err)
	}
	srcs := make([]history.Source, len(paths))
	for i, p := range paths {
		srcs[i] = history.Source{Name: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }}
	}
	h, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil || len(h.Tests) != 2000 {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Score(h, Defaults()); err != nil {
			b.Fatal(err)
		}
	}
}

package junit

import (
	"bytes"
	"os"
	"testing"

	"github.com/flakegate/flakegate/pkg/synth"
)

// BenchmarkParse reads one 2,000-testcase file of the benchmark history
// with the reader alone: go test -run '^$' -bench Parse ./pkg/junit
func BenchmarkParse(b *testing.B) {
	paths, err := synth.BenchFiles()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	r := NewReader()
	for b.Loop() {
		n := 0
		if _, err := r.Parse("x", bytes.NewReader(data), func(c *Case) error { n++; return nil }); err != nil || n != 2000 {
			b.Fatal(err, n)
		}
	}
}

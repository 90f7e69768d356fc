package junit

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/flakegate/flakegate/pkg/model"
)

func TestZZRepeatShare(t *testing.T) {
	paths, _ := filepath.Glob("../../../shared/conformance/junit/*/*.xml")
	tm := regexp.MustCompile(`( time=")[^"]*"`)
	ts := regexp.MustCompile(`( timestamp=")[^"]*"`)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b2 := ts.ReplaceAll(tm.ReplaceAll(b, []byte(`${1}9.99"`)), []byte(`${1}2030-01-01T00:00:00"`))
		r := NewReader()
		if _, err := r.Parse(p, bytes.NewReader(b), func(c *Case) error { return nil }); err != nil {
			continue
		}
		before := r.repeats
		n, pass := 0, 0
		r.Parse(p, bytes.NewReader(b2), func(c *Case) error {
			n++
			if c.Outcome == model.Passed {
				pass++
			}
			return nil
		})
		if n >= 3 && r.repeats-before < pass*9/10 {
			t.Logf("%-70s %4d of %4d repeated, %4d passed", p[34:], r.repeats-before, n, pass)
		}
	}
}

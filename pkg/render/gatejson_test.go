package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/gate"
)

// filler sets every field of a value, recursively, from a seeded source:
// a field added to gate.Result or gate.TestResult is then written by
// encoding/json, and a hand-written encoder that misses it differs.
type filler struct {
	rng    *rand.Rand
	strs   []string
	floats []float64
}

func newFiller(seed uint64) *filler {
	return &filler{rng: rand.New(rand.NewPCG(seed, seed^0x5bd1e995)),
		strs: []string{"", "plain", `q"uote`, `back\slash`, "<img src=x>", "a & b", "tab\there", "nl\nx", "\x00\x1f",
			"ünïcödé", "\u2028\u2029", "bad\xffutf8", "tests/a.py::test_b[firefox]", strings.Repeat("x", 300), "emoji 🎉"},
		floats: []float64{0, 1, 0.5, 1.0 / 3, 1e-7, 2.5e-9, 1e21, 123456789.125, 0.1 + 0.2, 3e-6, 0.000001, 0.05}}
}

func (f *filler) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.strs[f.rng.IntN(len(f.strs))])
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.rng.IntN(2000)) - 2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.rng.IntN(2000)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.floats[f.rng.IntN(len(f.floats))] * float64(1+f.rng.IntN(3)))
	case reflect.Bool:
		v.SetBool(f.rng.IntN(2) == 0)
	case reflect.Pointer:
		if depth > 6 || f.rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch k := f.rng.IntN(4); {
		case depth > 6 || k == 0:
			v.SetZero()
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), k-1, k-1)
			for i := range k - 1 {
				f.fill(s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		v.SetZero()
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			}
		}
	}
}

// TestGateJSONMatchesEncodingJSON compares GateJSON with what the gate's
// report has always been, json.MarshalIndent plus a newline, on results
// whose every field is set, awkward strings and numbers included.
func TestGateJSONMatchesEncodingJSON(t *testing.T) {
	f := newFiller(12)
	for i := range 100 {
		var r gate.Result
		f.fill(reflect.ValueOf(&r).Elem(), 0)
		if i%10 == 0 {
			// Many tests: more chunks than buffers.
			r.Tests = make([]gate.TestResult, 1+f.rng.IntN(2500))
			for k := range r.Tests {
				f.fill(reflect.ValueOf(&r.Tests[k]).Elem(), 1)
			}
		}
		want, err := json.MarshalIndent(&r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		var got bytes.Buffer
		if err := GateJSON(&got, &r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			g, w := got.String(), string(want)
			k := 0
			for k < len(g) && k < len(w) && g[k] == w[k] {
				k++
			}
			t.Fatalf("result %d (%d tests) differs at byte %d:\nwant …%s\ngot  …%s", i, len(r.Tests), k,
				w[max(0, k-200):min(len(w), k+200)], g[max(0, k-200):min(len(g), k+200)])
		}
	}
}

func TestGateJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, r := range []gate.Result{
		{Tests: []gate.TestResult{{Name: "a"}, {Name: "b", P0: gate.P0{Mean: math.NaN()}}}},
		{Tests: []gate.TestResult{{Name: "a", Stat: &gate.Stat{Tail: math.Inf(1)}}}},
	} {
		if _, err := json.Marshal(&r); err == nil {
			t.Fatal("encoding/json accepted it")
		}
		if err := GateJSON(&bytes.Buffer{}, &r); err == nil {
			t.Error("GateJSON accepted a NaN or an infinity")
		}
	}
	// A refused value in any chunk, the first or one written after
	// several buffers were reused, is refused, naming its test.
	for _, bad := range []int{0, 255, 256, 2100, 2999} {
		r := gate.Result{Tests: make([]gate.TestResult, 3000)}
		for i := range r.Tests {
			r.Tests[i].Name = fmt.Sprintf("t%d", i)
		}
		r.Tests[bad].P0.Mean = math.NaN()
		err := GateJSON(&bytes.Buffer{}, &r)
		if want := fmt.Sprintf("%q", r.Tests[bad].Name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NaN in test %d of 3,000: error %v, want one naming %s", bad, err, want)
		}
	}
	if err := GateJSON(&bytes.Buffer{}, nil); err == nil {
		t.Error("nil result accepted")
	}
}

// BenchmarkGateJSON encodes the gate's result for a suite of 20,000 tests
// (5 base and 5 head runs, 150 history runs, 40 flaky), about 11 MB, with
// GateJSON and with json.MarshalIndent, as the gate did before:
//
//	go test -run '^$' -bench GateJSON -benchtime 20x ./pkg/render
func BenchmarkGateJSON(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 8))
	var in gate.Input
	for i := range 20000 {
		p := 0.0
		if i%500 == 0 {
			p = 0.3
		}
		runs := func(n int) []bool {
			out := make([]bool, n)
			for k := range out {
				out[k] = rng.Float64() >= p
			}
			return out
		}
		ti := gate.TestInput{Name: fmt.Sprintf("tests.test_module_%02d::test_case_%05d", i/50, i), File: fmt.Sprintf("tests/test_module_%02d.py", i/50),
			Base: gate.TallyOf(runs(5)), Head: runs(5), History: gate.TallyOf(runs(150))}
		in.Tests = append(in.Tests, ti)
	}
	r, err := gate.Evaluate(in, gate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	size, _ := json.MarshalIndent(&r, "", "  ")
	b.Run("GateJSON", func(b *testing.B) {
		b.SetBytes(int64(len(size)))
		b.ReportAllocs()
		for b.Loop() {
			if err := GateJSON(io.Discard, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MarshalIndent", func(b *testing.B) {
		b.SetBytes(int64(len(size)))
		b.ReportAllocs()
		for b.Loop() {
			j, err := json.MarshalIndent(&r, "", "  ")
			if err != nil {
				b.Fatal(err)
			}
			io.Discard.Write(append(j, '\n'))
		}
	})
}

// TestWriteWithTestsInOrder: with more workers than cores and chunks that
// take uneven time, every chunk still lands in its place. Workers that
// took chunk numbers and then waited for a free buffer could take one out
// of turn when preempted in between.
func TestWriteWithTestsInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	tests := make([]int, 40*256+17)
	for i := range tests {
		tests[i] = i
	}
	appendTest := func(b []byte, v *int) ([]byte, error) {
		if *v%256 == 0 && *v/256%3 == 0 {
			runtime.Gosched() // uneven chunks: let the scheduler move workers around
		}
		return strconv.AppendInt(b, int64(*v), 10), nil
	}
	name := func(v *int) string { return strconv.Itoa(*v) }
	want, err := json.MarshalIndent(struct {
		Tests []int `json:"tests"`
	}{tests}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	for i := range 200 {
		var got bytes.Buffer
		if err := writeWithTests(&got, struct {
			Tests []int `json:"tests"`
		}{[]int{}}, tests, appendTest, name); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("round %d: the tests came out of order", i)
		}
	}
}

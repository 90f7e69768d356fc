package junit

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestISOStampAgreesWithTimeParse: every timestamp isoStamp reads, it reads
// as time.Parse does with the layout it names, and it leaves alone only
// what it does not read; over written, mutated and random stamps.
func TestISOStampAgreesWithTimeParse(t *testing.T) {
	seeds := []string{
		"2026-10-02T16:21:00", "2026-10-02T16:21:00Z", "2026-10-02T16:21:00.5", "2026-10-02T16:21:00.123456789Z",
		"2024-02-29T00:00:00", "2023-02-29T00:00:00", "2026-04-31T12:00:00", "2026-12-31T23:59:59",
		"2026-10-02T24:00:00", "2026-10-02T23:60:00", "2026-10-02T23:59:60", "2026-13-01T00:00:00",
		"2026-00-10T00:00:00", "2026-10-00T00:00:00", "2026-10-02T16:21:00.1234567890", "2026-10-02T16:21:00.",
		"2026-10-02T16:21:00+02:00", "2026-10-02 16:21:00", "2026-10-02T16:21:00z", "+026-10-02T16:21:00",
		"2026-1a-02T16:21:00", "0000-01-01T00:00:00", "1900-02-29T00:00:00", "2000-02-29T00:00:00Z",
		"2026-10-02T16:21:00.Z", "2026-10-02T16:21:00ZZ", "2026-10-02T16:21", "",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := "0123456789-:T.Z+ z"
	var cases []string
	for _, s := range seeds {
		cases = append(cases, s)
		for range 200 {
			b := []byte(s)
			if len(b) == 0 {
				break
			}
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
			cases = append(cases, string(b))
		}
	}
	read := 0
	for _, s := range cases {
		got, k, ok := isoStamp([]byte(s))
		if !ok {
			continue
		}
		read++
		want, err := time.Parse(timeLayouts[k], s)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("isoStamp(%q) = %v (layout %d); time.Parse gives %v, %v", s, got, k, want, err)
		}
		// The other layout that could apply must not have read it
		// differently either.
		if other, err := time.Parse(timeLayouts[1-k], s); err == nil && !other.Equal(got) {
			t.Errorf("isoStamp(%q) = %v; layout %d reads %v", s, got, 1-k, other)
		}
	}
	if read < 400 {
		t.Errorf("isoStamp read only %d of %d stamps", read, len(cases))
	}
	// What isoStamp leaves alone but time.Parse reads is read the slow way.
	for _, s := range cases {
		if _, _, ok := isoStamp([]byte(s)); ok {
			continue
		}
		for k := range 2 {
			if want, err := time.Parse(timeLayouts[k], s); err == nil {
				got, _ := parseTimeFrom([]byte(s), 0)
				if !got.Equal(want.UTC()) {
					t.Errorf("parseTimeFrom(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

package safepub

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSampleExact: a record is kept exactly when its 53-bit integer is below
// BetaBits (the boundary both ways, the low 11 bits ignored).
func TestSampleExact(t *testing.T) {
	p := Params{BetaBits: 1000}
	var words []uint64
	for _, u := range []uint64{0, 999, 1000, 1001, 1 << 52} {
		words = append(words, u<<11, u<<11|0x7ff)
	}
	var buf bytes.Buffer
	for _, w := range words {
		binary.Write(&buf, binary.LittleEndian, w)
	}
	keep, err := p.Sample(len(words), &buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, true, true, false, false, false, false, false, false}
	for i := range want {
		if keep[i] != want[i] {
			t.Errorf("record %d (word %#x): kept %v, want %v", i, words[i], keep[i], want[i])
		}
	}
}

// TestSampleFrequency: over 2·10^6 records from a seeded stream, the records kept lie
// within six standard deviations of n·β, for several β, and every chunk's share too
// within its own; a source that runs dry is an error.
func TestSampleFrequency(t *testing.T) {
	for _, eps := range []float64{0.01, 0.6931471805599453, 2} {
		p, err := Compute(eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		const n = 2_000_000
		keep, err := p.Sample(n, rand.NewChaCha8([32]byte{byte(eps * 100)}))
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, k := range keep {
			if k {
				kept++
			}
		}
		mean, sd := n*p.Beta, math.Sqrt(n*p.Beta*(1-p.Beta))
		if math.Abs(float64(kept)-mean) > 6*sd {
			t.Errorf("ε %g: %d of %d kept, expected %.0f ± %.0f", eps, kept, n, mean, sd)
		}
	}
	if _, err := (Params{BetaBits: 1 << 52}).Sample(10, bytes.NewReader(make([]byte, 40))); err == nil || errors.Is(err, ErrParams) {
		t.Errorf("a dry source: %v", err)
	}
	if _, err := (Params{}).Sample(10, rand.NewChaCha8([32]byte{})); !errors.Is(err, ErrParams) {
		t.Errorf("no β: %v", err)
	}
}

// TestStreams: a stream is a function of the run's key, the purpose, the part and the
// block; changing any one of them gives another stream; a key comes from the source
// given, and a short source is an error.
func TestStreams(t *testing.T) {
	first := func(s Streams, purpose Purpose, part, block int) [4]uint64 {
		r := s.Stream(purpose, part, block)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	a, err := NewStreams(rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewStreams(rand.NewChaCha8([32]byte{2}))
	if err != nil {
		t.Fatal(err)
	}
	base := first(a, PurposeRelease, 3, 1)
	if again := first(a, PurposeRelease, 3, 1); again != base {
		t.Errorf("the same key, purpose, part and block gave two streams")
	}
	seen := map[[4]uint64]string{base: "release, part 3, block 1"}
	for name, words := range map[string][4]uint64{
		"another key":     first(b, PurposeRelease, 3, 1),
		"search":          first(a, PurposeSearch, 3, 1),
		"part 2":          first(a, PurposeRelease, 2, 1),
		"block 0":         first(a, PurposeRelease, 3, 0),
		"part 1, block 3": first(a, PurposeRelease, 1, 3),
	} {
		if other, ok := seen[words]; ok {
			t.Errorf("%s gave the stream of %s", name, other)
		}
		seen[words] = name
	}
	if _, err := NewStreams(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("a key from a source of 31 bytes: no error")
	}
	p := Params{BetaBits: 1 << 52}
	if err := p.SampleBlock(make([]bool, StreamBlock+1), a, PurposeRelease, 0, 0); !errors.Is(err, ErrParams) {
		t.Errorf("a block of %d records: %v, want ErrParams", StreamBlock+1, err)
	}
}

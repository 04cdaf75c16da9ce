package generalize

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// TestClassTableCodec: encoded and decoded, a class table is the same table (codes,
// counts, histograms), searches to the same node, and merges as the original; damaged
// data is refused.
func TestClassTableCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 30 {
		n := 1 + rng.IntN(400)
		tab, _, _ := randomTableOf(rng, n, 1+rng.IntN(3), 2, 30, func(u float64) float64 { return u * u })
		if trial%2 == 0 {
			s, _ := skewedSensitive(rng, n, 2+rng.IntN(5))
			tab.Sensitive = []Sensitive{s}
		}
		ct, err := CountClasses(tab)
		if err != nil {
			t.Fatal(err)
		}
		data, err := ct.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalClasses(data, tab)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !got.Equal(ct) {
			t.Fatalf("trial %d: decoded table differs", trial)
		}
		want := int64(ct.Len()) * int64(4*(len(tab.Columns)+1))
		for _, h := range ct.hist {
			want += int64(4*(ct.Len()+1) + 8*len(h.val))
		}
		if got.Bytes() != want || got.Bytes() <= 0 {
			t.Fatalf("trial %d: Bytes %d, the arrays hold %d", trial, got.Bytes(), want)
		}
		half, err := CountClasses(tab.Records(0, n/2))
		if err != nil {
			t.Fatal(err)
		}
		rest, err := CountClasses(tab.Records(n/2, n))
		if err != nil {
			t.Fatal(err)
		}
		hb, _ := half.MarshalBinary()
		rb, _ := rest.MarshalBinary()
		h2, err1 := UnmarshalClasses(hb, tab)
		r2, err2 := UnmarshalClasses(rb, tab)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		merged, err := MergeClasses(h2, r2)
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := MergeClasses(half, rest)
		if !merged.Equal(whole) {
			t.Fatalf("trial %d: decoded parts merge to another table", trial)
		}
		// Every strict prefix and a changed byte in each position are refused or
		// decode to a table that encodes to the same bytes.
		for cut := range len(data) {
			if _, err := UnmarshalClasses(data[:cut], tab); !errors.Is(err, errClassTableData) {
				t.Fatalf("trial %d: a prefix of %d of %d bytes: %v", trial, cut, len(data), err)
			}
		}
	}
}

// FuzzUnmarshalClasses: decoding any bytes never panics, and what decodes encodes to
// the same bytes.
func FuzzUnmarshalClasses(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 9))
	tab, _, _ := randomTableOf(rng, 50, 2, 3, 8, func(u float64) float64 { return u })
	s, _ := skewedSensitive(rng, 50, 4)
	tab.Sensitive = []Sensitive{s}
	ct, _ := CountClasses(tab)
	seed, _ := ct.MarshalBinary()
	f.Add(seed)
	f.Add([]byte("SCT1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := UnmarshalClasses(data, tab)
		if err != nil {
			if !errors.Is(err, errClassTableData) {
				t.Fatalf("error %v is not errClassTableData", err)
			}
			return
		}
		again, err := got.MarshalBinary()
		if err != nil || string(again) != string(data) {
			t.Fatalf("decoded table re-encodes to other bytes (%v)", err)
		}
	})
}

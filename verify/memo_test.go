package verify

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// lookalikes are n distinct values of the given length (at least 17) that share their
// first and last 8 bytes.
func lookalikes(n, length int) []string {
	out := make([]string, n)
	for i := range out {
		mid := fmt.Sprintf("%0*d", length-16, i)
		out[i] = "firstAB" + "<" + mid + ">" + "lastXYZ"
	}
	return out
}

// TestValueNumbers: values numbered through the memo get the numbers a map gives
// them, whether they come as one shared string per value (as the decoders hand them
// out) or as copies of their own, lookalikes (alike but in their middle bytes) and
// values of one length included, through the memo's growth, past its largest size and
// across the periods after which it lets go of its strings; values past the first
// numberedMax have none.
func TestValueNumbers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	vals := lookalikes(40, 24)
	for i := range 1 << memoMaxBits {
		vals = append(vals, fmt.Sprintf("v%05d", i), "a value of more than sixteen bytes "+strconv.Itoa(i))
	}
	vn := newValueNumbers()
	want := map[string]int32{}
	for range 2*strMemoPeriod + 1000 {
		// mostly the first values, as a column repeats few of them
		v := vals[rng.IntN(1+rng.IntN(len(vals)))]
		if rng.IntN(4) == 0 {
			v = strings.Clone(v) // the same value in a string of its own
		}
		id := vn.id(v)
		w, ok := want[v]
		if !ok {
			w = -1 // past numberedMax values
			if len(want) < numberedMax {
				w = int32(len(want))
				want[v] = w
			}
		}
		if id != w || (id >= 0 && vn.vals[id] != v) {
			t.Fatalf("%q: number %d, want %d", v, id, w)
		}
	}
	if vn.memo.table.bits != memoMaxBits || len(want) < numberedMax {
		t.Fatalf("the memo has %d slots for %d values: the test does not fill it", len(vn.memo.table.slots), len(want))
	}
}

// TestPairMemo: the memo of pairs gives what a map gives, through its growth.
func TestPairMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m := newPairMemo()
	want := map[[2]int32]uint32{}
	for range 200000 {
		a, b := int32(rng.IntN(200)), int32(rng.IntN(200))-1
		v, ok := m.get(a, b)
		w, wok := want[[2]int32{a, b}]
		if ok && (!wok || v != w) {
			t.Fatalf("(%d, %d): %d, want %d (%v)", a, b, v, w, wok)
		}
		if !ok {
			if !wok {
				w = rng.Uint32()
				want[[2]int32{a, b}] = w
			}
			m.put(a, b, w)
		}
	}
}

// TestCounterLookalikes: released values alike but in their middle bytes are different
// values: of a quasi-identifier, different classes; of a sensitive column, different
// values (one the input does not hold); of the input, different leaves.
func TestCounterLookalikes(t *testing.T) {
	l := lookalikes(3, 21)
	spec := Spec{K: 2, MaxSuppressed: 0, InputRows: 4, Columns: []string{"q", "s"}, Quasi: []string{"q"}}
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range [][]string{{l[0], "x"}, {l[0], "x"}, {l[1], "x"}, {l[0], "x"}} {
		if err := c.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	var v *Violation
	if m, err := c.Finish(); !errors.As(err, &v) || m.Classes != 2 || m.MinClass != 1 {
		t.Fatalf("measured %+v, %v; want 2 classes, the smallest of 1, a violation", m, err)
	}

	spec.Sensitive = []Sensitive{{Column: "s", Values: []string{l[0], l[2]}}}
	if c, err = NewCounter(spec, spec.Columns); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{l[0], l[2], l[0]} {
		if err := c.Add([]string{"a", s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Add([]string{"a", l[1]}); !errors.As(err, &v) || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("a sensitive value the input does not hold, lookalike of two it does: %v", err)
	}

	// The utility: the input's values are leaves of a mask hierarchy, each its own.
	d, err := MaskDomain(true, 1)
	if err != nil {
		t.Fatal(err)
	}
	spec = Spec{K: 1, MaxSuppressed: 0, InputRows: 3, Columns: []string{"q"}, Quasi: []string{"q"},
		Utility: []Quasi{{Column: "q", Domain: d}}, FullDomain: true}
	if c, err = NewCounter(spec, spec.Columns); err != nil {
		t.Fatal(err)
	}
	for _, o := range l {
		if err := c.AddMatched([]string{o}, []string{o}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := c.Finish()
	if err != nil || m.Classes != 3 || m.Loss != 0 || m.NonUniformEntropy != 0 {
		t.Fatalf("three lookalikes released as themselves: %+v, %v; want 3 classes without loss", m, err)
	}
	u := c.util.cols[0]
	if len(u.leaves) != 3 || u.freq[0] != 1 || u.freq[1] != 1 || u.freq[2] != 1 {
		t.Fatalf("leaves %q, counts %v; want the three lookalikes once each", u.leaves, u.freq)
	}
}

// BenchmarkCounter counts records of eight quasi-identifiers in some 60,000 classes,
// as the 10M-record benchmark's release has.
func BenchmarkCounter(b *testing.B) {
	sizes := []int{11, 2, 9, 6, 25, 3, 14, 4}
	cols := make([]string, len(sizes))
	domains := make([][]string, len(sizes))
	for j, n := range sizes {
		cols[j] = "q" + strconv.Itoa(j)
		for i := range n {
			domains[j] = append(domains[j], fmt.Sprintf("[%d,%d]", 10*i, 10*i+9))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	classes := make([][]string, 60000)
	for i := range classes {
		for j := range sizes {
			classes[i] = append(classes[i], domains[j][rng.IntN(sizes[j])])
		}
	}
	const n = 1 << 20
	recs := make([]string, 0, n*len(sizes))
	for range n {
		recs = append(recs, classes[rng.IntN(len(classes))]...)
	}
	spec := Spec{K: 1, InputRows: n, Columns: cols, Quasi: cols}
	b.ResetTimer()
	for range b.N {
		c, err := NewCounter(spec, cols)
		if err != nil {
			b.Fatal(err)
		}
		w := len(cols) * 1024
		for i := 0; i < len(recs); i += w {
			if err := c.AddMatchedBatch(recs[i:i+w], nil); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}

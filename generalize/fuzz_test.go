package generalize

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// checkConsistent checks the invariants of a hierarchy: leaf codes are the level-0
// codes, two leaves equal at level i are equal at level i+1, value names and codes
// agree, leaf counts add up, and the top level is a single value, not empty.
func checkConsistent(t *testing.T, h *Hierarchy) {
	t.Helper()
	height, n := h.Height(), h.Leaves()
	if height < 2 || n < 1 {
		t.Fatalf("Height, Leaves = %d, %d", height, n)
	}
	top := height - 1
	if h.Size(top) != 1 || h.Value(top, 0) != h.TopValue() || h.TopValue() == "" || h.LeafCount(top, 0) != n {
		t.Fatalf("top level: size %d, value %q, %d leaves", h.Size(top), h.Value(top, 0), h.LeafCount(top, 0))
	}
	if h.Size(0) != n {
		t.Fatalf("Size(0) = %d, Leaves = %d", h.Size(0), n)
	}
	for l := range height {
		counts := make([]int, h.Size(l))
		codeOf := make(map[string]int32, h.Size(l))
		for c := range int32(h.Size(l)) {
			v := h.Value(l, c)
			if _, dup := codeOf[v]; dup {
				t.Fatalf("level %d: value %q has two codes", l, v)
			}
			codeOf[v] = c
		}
		parent := make(map[int32]int32)
		for leaf := range int32(n) {
			c := h.Code(l, leaf)
			if c < 0 || int(c) >= h.Size(l) {
				t.Fatalf("level %d leaf %d: code %d out of range", l, leaf, c)
			}
			counts[c]++
			if l == 0 {
				if c != leaf {
					t.Fatalf("leaf %d has level-0 code %d", leaf, c)
				}
				if got, ok := h.Leaf(h.Value(0, c)); !ok || got != leaf {
					t.Fatalf("Leaf(Value(0, %d)) = %d, %v", c, got, ok)
				}
			}
			if l < top {
				up := h.Code(l+1, leaf)
				if p, ok := parent[c]; ok && p != up {
					t.Fatalf("level %d value %q generalizes to both %q and %q", l, h.Value(l, c), h.Value(l+1, p), h.Value(l+1, up))
				}
				parent[c] = up
			}
		}
		for c, k := range counts {
			if k == 0 || h.LeafCount(l, int32(c)) != k {
				t.Fatalf("level %d code %d: LeafCount %d, counted %d", l, c, h.LeafCount(l, int32(c)), k)
			}
		}
	}
}

func FuzzReadHierarchy(f *testing.F) {
	for _, s := range []string{
		"a;x;*\nb;x;*\nc;y;*\n",
		"\ufeffa;*\r\nb;*\r\n",
		"\"a;b\";\"q\"\"\";*\n\"m\nl\";x;*\n",
		"a;x;p;*\nb;y;p;*\nc;x;q;*\n",
		"a;x;*\nb;*\n",
		"a;x;*\na;y;*\n",
		"a;top\nb;*\n",
		"a\n",
		"",
		"\n\n",
		"a;*\nb\"c;*\n",
		"a;\"x;*\n",
		"1;0-4;0-9;0-19;*\n2;0-4;0-9;0-19;*\n6;5-9;0-9;0-19;*\n11;10-14;10-19;0-19;*\n",
		"*;*\n;*\n",
		"a;*;*\nb;x;*\n",
		"flu;respiratory;any disease\nburn;injury;any disease\n",
		"a;x;*****\nb;y;*****\n",
		"a;x;any\nb;y;Any\n",
		"a;\nb;\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ReadHierarchy(strings.NewReader(s), "f.csv")
		if err != nil {
			if h != nil {
				t.Fatal("hierarchy and error both returned")
			}
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error %v does not match fault.ErrBadInput", err)
			}
			if !strings.HasPrefix(err.Error(), "f.csv:") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkConsistent(t, h)
		if h.Source() != "f.csv" {
			t.Fatalf("Source = %q", h.Source())
		}
	})
}

// FuzzBuildIntervals checks float interval hierarchies: consistent, and every value in
// the interval of every level.
func FuzzBuildIntervals(f *testing.F) {
	f.Add("0.3", "0.25", 0.1, uint8(3), uint8(2))
	f.Add("-3", "7", 5.0, uint8(2), uint8(10))
	f.Add("1e300", "-1e-300", 1e-10, uint8(1), uint8(1))
	f.Add("0.7", "0.6", 0.1, uint8(3), uint8(3))
	f.Fuzz(func(t *testing.T, a, b string, w float64, r1, r2 uint8) {
		if a == b || math.IsNaN(w) || math.IsInf(w, 0) || w <= 0 || r1 == 0 || r2 == 0 {
			return
		}
		widths := []float64{w, w * float64(r1), w * float64(r1) * float64(r2)}
		h, err := BuildIntervals("x", []string{a, b}, schema.Float, widths)
		if err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error %v does not match fault.ErrBadInput", err)
			}
			return
		}
		checkConsistent(t, h)
		checkIntervals(t, h, []string{a, b}, schema.Float)
		for _, v := range []string{a, b} {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				t.Fatalf("accepted %q", v)
			}
		}
	})
}
